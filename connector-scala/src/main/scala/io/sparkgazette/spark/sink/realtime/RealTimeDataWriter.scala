package io.sparkgazette.spark
package sink
package realtime

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import io.sparkgazette.message._
import io.sparkgazette.spark.clients.ClientCache
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.handoff.RealTimeReads
import io.sparkgazette.spark.sink.config.{SinkConfig, SinkTargets}
import io.sparkgazette.spark.sink.intents.{GazetteCommitMessage, SinkProducers}
import io.sparkgazette.spark.sink.metrics.WriterCounts
import io.sparkgazette.spark.sink.rows.SinkRows
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.write.{DataWriter, WriterCommitMessage}
import org.slf4j.LoggerFactory

/** Publishes one real-time task's rows as they come: each row a committed OUTSIDE_TXN message,
  * appended within milliseconds (see [[RealTimeAppender]]), so read-committed readers see it
  * long before the batch ends. Exactly once, its UUID follows from its `origin` (see
  * [[OriginUuids]]): a batch run again after a failure writes the rows it writes again under the
  * same UUIDs, and readers drop them. Rows whose input Gazette delivers at least once (no UUID,
  * no clock, read uncommitted), rows an operator holds back whose message the writer cannot tell
  * or puts out of their messages' order (see [[OriginUuids]]) and every row of an at-least-once write take a producer of this
  * writer's own. Nothing waits for the driver: `commit` returns once every row is appended, before Spark
  * records the batch's offsets.
  */
private[sink] final class RealTimeDataWriter(config: SinkConfig, targets: SinkTargets, partitionId: Int,
    epoch: Long, seed: Long, producers: SinkProducers, clockFloor: Long, stageAttempt: Int, attempt: Int)
    extends DataWriter[InternalRow] {
  import RealTimeDataWriter._

  private val sinkRows = new SinkRows(config, targets, partitionId, realTime = true)
  private val cols = config.columns
  private val exactlyOnce = config.options.exactlyOnce
  private val origins = new OriginUuids(seed)
  private val firstAttempt = SinkProducers.isFirst(stageAttempt, attempt)
  // The attempt's own producer, which no other live attempt shares (see RealTimeRun).
  private val ownClock = new MonotonicClock(clockFloor)
  private val own = new Publisher(producers.producer(partitionId, stageAttempt, attempt, epoch), ownClock)
  private val appender = new RealTimeAppender(ClientCache(config.client), config.options.flushBytes,
    s"gazette-sink-append-$epoch-$partitionId")
  private val out = new ByteArrayOutputStream(1024)
  private val checked = scala.collection.mutable.Map[String, RealTimeReads.Read]()
  // The reasons already logged: each once a task, whichever comes first.
  private val warned = scala.collection.mutable.Set[OriginUuids.Unsequenced]()
  private var rows = 0L
  private val counts = new WriterCounts

  override def write(row: InternalRow): Unit = {
    val origin = originOf(row)
    val journal = sinkRows.journalOf(row, origin.fold(randomKey())(o => s"${o._1}/${o._2}".getBytes(UTF_8)))
    targets.unwritable.get(journal).foreach(why => throw GazetteErrors.unwritableJournals(Seq((journal, 1L, why))))
    val framing = sinkRows.framingOf(journal, rows)
    val payload = sinkRows.payloadOf(row, journal, framing, rows)
    uuidOf(origin) match {
      case Some(uuid) =>
        out.reset()
        try framing.frame(payload, uuid, out)
        catch {
          case e: MessageFormatException =>
            throw GazetteErrors.unframableRow(rows, partitionId, journal, e.getMessage, e)
        }
        if (zombie.isDefined) zombie.get.hold(Left((journal, out.toByteArray)))
        else GazetteErrors.brokerCalls(appender.add(journal, out.toByteArray, 0, out.size()))
      case None =>
        if (zombie.isDefined) zombie.get.hold(Right((journal, framing, payload)))
        else publishOwn(journal, framing, payload)
    }
    rows += 1
    if (rows == ZombieRows) zombie.foreach(_.strike())
  }

  private def publishOwn(journal: String, framing: Framing, payload: Array[Byte]): Unit = {
    try own.publishCommitted(journal, framing, payload)
    catch {
      case e: MessageFormatException =>
        throw GazetteErrors.unframableRow(rows, partitionId, journal, e.getMessage, e)
    }
    GazetteErrors.brokerCalls(own.drainTo(journal)((b, off, len) => appender.add(journal, b, off, len)))
  }

  // test.sinkFault=task-zombie: this attempt holds its first rows, fails its task to Spark, and
  // appends what it holds from a thread of its own, slowly, while Spark runs the task again.
  private val zombie =
    if (config.options.testFault.exists(_.strikes("task-zombie", epoch)) && partitionId == 0 && firstAttempt)
      Some(new Zombie)
    else None

  private final class Zombie {
    private val held =
      scala.collection.mutable.ArrayBuffer[Either[(String, Array[Byte]), (String, Framing, Array[Byte])]]()
    @volatile var appending = false

    def hold(row: Either[(String, Array[Byte]), (String, Framing, Array[Byte])]): Unit = held += row

    def holding: Boolean = held.nonEmpty

    def strike(): Unit = {
      appending = true
      val thread = new Thread(
        () =>
          try {
            held.foreach { row =>
              Thread.sleep(ZombieMs / math.max(1, held.size))
              row match {
                case Left((journal, bytes)) => appender.add(journal, bytes, 0, bytes.length)
                case Right((journal, framing, payload)) => publishOwn(journal, framing, payload)
              }
            }
            appender.flush()
          } catch { case e: Exception => log.warn(s"the zombie attempt of partition $partitionId stopped: $e") }
          finally appender.close(),
        s"gazette-sink-zombie-$epoch-$partitionId"
      )
      thread.setDaemon(true)
      thread.start()
      throw new IllegalStateException(s"injected zombie attempt in batch $epoch after $rows rows")
    }
  }

  /** The row's origin journal and UUID, where an exactly-once write has one. */
  private def originOf(row: InternalRow): Option[(String, String)] =
    if (!exactlyOnce || cols.origin < 0 || row.isNullAt(cols.origin)) None
    else {
      val o = row.getStruct(cols.origin, 2)
      if (o.isNullAt(0) || o.isNullAt(1)) None else Some((o.getUTF8String(0).toString, o.getUTF8String(1).toString))
    }

  // Rows without an origin are at least once: spread at random, not all to one journal.
  private def randomKey(): Array[Byte] = {
    val b = new Array[Byte](8)
    java.util.concurrent.ThreadLocalRandom.current().nextBytes(b)
    b
  }

  private def uuidOf(origin: Option[(String, String)]): Option[UUID] = origin.flatMap { case (journal, text) =>
    val read = checked.getOrElseUpdate(journal,
      RealTimeReads.of(journal).getOrElse(throw GazetteErrors.originNotReadInTask(rows, partitionId, journal)))
    val source = read.source.getOrElse(throw GazetteErrors.originReadTwiceInTask(rows, partitionId, journal))
    if (!read.committed) None
    else {
      val uuid = Uuid.parse(text).getOrElse(throw GazetteErrors.invalidOrigin(rows, partitionId, text))
      origins.next(journal, uuid, source, read.sequenced) match {
        case Right(u) => Some(u)
        case Left(OriginUuids.NoClock) => None
        case Left(why) =>
          if (warned.add(why)) log.warn(s"partition $partitionId of batch $epoch: " +
            (why match {
              case OriginUuids.Ambiguous =>
                s"an operator between the source and the sink holds rows back, and a message of $journal was " +
                  "committed more than once lately (after a rollback to an older ACK): rows of such messages"
              case OriginUuids.OutOfOrder =>
                s"an operator between the source and the sink puts rows of $journal out of their messages' order: " +
                  "such rows"
              case OriginUuids.CopyPassed =>
                s"an operator between the source and the sink holds rows back past the last " +
                  s"${read.sequenced.capacity} messages its source emitted, and a message of $journal was " +
                  "committed again after a rollback to an older ACK: rows of such messages"
              case _ =>
                s"an operator between the source and the sink holds rows back past the last " +
                  s"${read.sequenced.capacity} messages its source emitted, in $journal: such rows"
            }) + " are written at least once")
          None
      }
    }
  }

  override def currentMetricsValues(): Array[CustomTaskMetric] = counted.report()

  private def counted: WriterCounts = { counts.rows = rows; appender.countInto(counts); counts }

  override def commit(): WriterCommitMessage = {
    zombie.filter(_.holding).foreach(_.strike())
    GazetteErrors.brokerCalls(appender.flush())
    GazetteCommitMessage(own.producer.toString, Nil, Nil, lastClock = ownClock.current, partition = partitionId,
      firstAttempt = firstAttempt, counts = counted.commit())
  }

  // What was appended is committed, and correct: a run again of the batch writes it again under
  // the same UUIDs, which readers drop.
  override def abort(): Unit = ()

  // A zombie's thread closes the appender once it has appended what it held.
  override def close(): Unit = if (!zombie.exists(_.appending)) appender.close()
}

private object RealTimeDataWriter {
  private val log = LoggerFactory.getLogger(classOf[RealTimeDataWriter])
  // test.sinkFault=task-zombie: the rows a zombie holds, and how long it takes to append them.
  private val ZombieRows = 60
  private val ZombieMs = 3000L
}
