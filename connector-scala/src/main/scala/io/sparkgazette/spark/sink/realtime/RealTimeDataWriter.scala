package io.sparkgazette.spark
package sink
package realtime

import java.io.ByteArrayOutputStream

import io.sparkgazette.message._
import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, WriterCommitMessage}

/** Publishes one real-time task's rows as they come: each row a committed OUTSIDE_TXN message,
  * appended within milliseconds (see [[RealTimeAppender]]), so read-committed readers see it
  * long before the batch ends. Exactly once, its UUID follows from its `origin` (see
  * [[OriginUuids]]): a batch run again after a failure writes the rows it writes again under the
  * same UUIDs, and readers drop them. A row without an origin UUID (its input message had none,
  * and was read at least once) and every row of an at-least-once write take the task's own
  * producer and clock. Nothing waits for the driver: `commit` returns once every row is
  * appended, before Spark records the batch's offsets.
  */
private[spark] final class RealTimeDataWriter(config: SinkConfig, targets: SinkTargets, partitionId: Int,
    epoch: Long, seed: Long)
    extends DataWriter[InternalRow] {
  private val rows_ = new SinkRows(config, targets, partitionId)
  private val cols = config.columns
  private val exactlyOnce = config.options.exactlyOnce
  private val origins = new OriginUuids(seed)
  private val task = Option(TaskContext.get())
  // Rows without an origin are as Gazette delivers their input: at least once, under a producer
  // of the task attempt, never one of the origins'.
  private val own = new Publisher(
    SinkProducers(seed, Map.empty).producer(partitionId, task.map(_.stageAttemptNumber()).getOrElse(0),
      task.map(_.attemptNumber()).getOrElse(0), epoch))
  private val appender = new RealTimeAppender(ClientCache(config.client), config.options.flushBytes,
    s"gazette-sink-append-$epoch-$partitionId")
  private val out = new ByteArrayOutputStream(1024)
  private var rows = 0L

  override def write(row: InternalRow): Unit = {
    val journal = rows_.journalOf(row)
    targets.unwritable.get(journal).foreach(why => throw GazetteErrors.unwritableJournals(Seq((journal, 1L, why))))
    val framing = rows_.framingOf(journal, rows)
    val payload = rows_.payloadOf(row, journal, framing, rows)
    originUuid(row) match {
      case Some(uuid) =>
        out.reset()
        frame(journal, framing, payload, uuid, out)
        GazetteErrors.brokerCalls(appender.add(journal, out.toByteArray, 0, out.size()))
      case None =>
        try own.publishCommitted(journal, framing, payload)
        catch {
          case e: MessageFormatException =>
            throw GazetteErrors.unframableRow(rows, partitionId, journal, e.getMessage, e)
        }
        GazetteErrors.brokerCalls(own.drainTo(journal)((b, off, len) => appender.add(journal, b, off, len)))
    }
    rows += 1
  }

  private def frame(journal: String, framing: Framing, payload: Array[Byte], uuid: java.util.UUID,
      to: ByteArrayOutputStream): Unit =
    try framing.frame(payload, uuid, to)
    catch {
      case e: MessageFormatException => throw GazetteErrors.unframableRow(rows, partitionId, journal, e.getMessage, e)
    }

  private def originUuid(row: InternalRow): Option[java.util.UUID] =
    if (!exactlyOnce) None
    else if (cols.origin < 0) throw GazetteErrors.realTimeOriginNeeded()
    else if (row.isNullAt(cols.origin)) None
    else {
      val origin = row.getStruct(cols.origin, 2)
      if (origin.isNullAt(0) || origin.isNullAt(1)) None
      else {
        val (journal, text) = (origin.getUTF8String(0).toString, origin.getUTF8String(1).toString)
        val uuid = Uuid.parse(text).getOrElse(throw GazetteErrors.invalidOrigin(rows, partitionId, text))
        origins.next(journal, uuid) match {
          case Left(()) => None
          case Right(next) =>
            Some(next.getOrElse(throw GazetteErrors.originOutOfOrder(rows, partitionId, journal, text)))
        }
      }
    }

  override def commit(): WriterCommitMessage = {
    GazetteErrors.brokerCalls(appender.flush())
    GazetteCommitMessage(own.producer.toString, Nil, Nil)
  }

  // What was appended is committed, and correct: a run again of the batch writes it again under
  // the same UUIDs, which readers drop.
  override def abort(): Unit = ()

  override def close(): Unit = appender.close()
}
