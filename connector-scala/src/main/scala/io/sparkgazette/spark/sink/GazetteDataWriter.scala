package io.sparkgazette.spark
package sink

import scala.util.control.NonFatal

import io.sparkgazette.message._
import io.sparkgazette.spark.clients.ClientCache
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.sink.config.{SinkConfig, SinkFault, SinkTargets}
import io.sparkgazette.spark.sink.intents.{GazetteCommitMessage, SinkProducers}
import io.sparkgazette.spark.sink.metrics.WriterCounts
import io.sparkgazette.spark.sink.rows.SinkRows
import com.google.protobuf.ByteString
import io.sparkgazette.spark.sink.staging.{StagedRunWriter, StagingThreshold}
import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.write.{DataWriter, WriterCommitMessage}
import org.slf4j.LoggerFactory

/** Publishes one task attempt's rows. Exactly-once, they are CONTINUE_TXN messages, appended
  * at commit in one append per journal (see [[JournalSpool]]); the attempt's ACK intents go to
  * the driver in its commit message and are appended only once the driver has recorded them. A stream's attempts
  * publish as the stable producers of [[SinkProducers]], batch jobs as a fresh producer.
  * Where the write can stage (see [[WriteStaging]]), a journal's rows are held unframed until they
  * outgrow `threshold`; from then on they are staged as committed messages instead (see [[StagedRun]]).
  * An epoch whose intents are already recorded was committed before a restart: its writers
  * write nothing.
  */
private[sink] final class GazetteDataWriter(config: SinkConfig, targets: SinkTargets, partitionId: Int, epoch: Long,
    producers: Option[SinkProducers] = None,
    threshold: StagingThreshold = StagingThreshold(Long.MaxValue, Long.MaxValue),
    writeId: String = "")
    extends DataWriter[InternalRow] {
  import GazetteDataWriter._

  private val client = ClientCache(config.client)
  private val task = Option(TaskContext.get())
  private val stable = producers.filter(_ => config.options.exactlyOnce)
  private val stageAttempt = task.map(_.stageAttemptNumber()).getOrElse(0)
  private val attempt = task.map(_.attemptNumber()).getOrElse(0)
  private val clock = new MonotonicClock(stable.fold(0L)(p => p.clockFloor(producerOf(p))))
  private val publisher = stable match {
    case Some(p) => new Publisher(producerOf(p), clock)
    case None => new Publisher(clock = clock)
  }
  private def producerOf(p: SinkProducers) = p.producer(partitionId, stageAttempt, attempt, epoch)
  // Exactly-once, a journal's bytes wait in a spool for the task's one append there at commit;
  // at-least-once, they are appended whenever flushBytes of them are buffered.
  private val spools = scala.collection.mutable.LinkedHashMap[String, JournalSpool]()
  // Journals this attempt wrote as a stable producer, each with a payload to shape ACKs after.
  private val written = scala.collection.mutable.LinkedHashMap[String, (Framing, Array[Byte])]()
  private val sinkRows = new SinkRows(config, targets, partitionId)
  private def framings = sinkRows.framings
  // Rows for journals the sink cannot write are held back and counted: the driver refuses the
  // epoch once, naming them, rather than every task failing on its own.
  private val unwritable = scala.collection.mutable.Map[String, Long]().withDefaultValue(0L)
  private val skip = config.intentLog.exists(l => l.open(config.hadoopConf.value).contains(l.key(epoch)))
  private val staging = config.staging.filter(_ => config.options.exactlyOnce)
  // Rows not yet framed, per journal, while it is undecided whether the task appends them
  // (uncommitted, at commit) or stages them (committed, published after the driver's commit).
  private val held = scala.collection.mutable.LinkedHashMap[String, HeldRows]()
  private val staged = scala.collection.mutable.LinkedHashMap[String, StagedRunWriter]()
  private val lastClocks = scala.collection.mutable.Map[String, Long]()
  private val firstPayloads = scala.collection.mutable.Map[String, Array[Byte]]()
  private var heldBytes = 0L
  private var rows = 0L
  private var wrote = false
  private val counts = new WriterCounts
  // An injected failure that stands for a dead executor: nothing of the attempt runs after it.
  private var lost = false

  if (skip) log.info(s"${config.intentLog.get.key(epoch)} is already committed; partition $partitionId writes nothing")

  override def write(row: InternalRow): Unit = if (!skip) {
    val journal = sinkRows.journalOf(row)
    if (targets.unwritable.contains(journal)) { unwritable(journal) += 1; return }
    val framing = sinkRows.framingOf(journal, rows)
    val payload = sinkRows.payloadOf(row, journal, framing, rows)
    // No rollback ACK goes ahead of the rows: no attempt under this producer can have left
    // messages open (see SinkProducers), and one landing again late, in a retried append's
    // first copy, would rewind readers below the producer's last ACK.
    if (stable.isDefined && !written.contains(journal)) written(journal) = (framing, payload)
    if (!config.options.exactlyOnce) publish(journal, framing, payload, rows, committed = true)
    else if (staging.isEmpty) publish(journal, framing, payload, rows, committed = false)
    else if (staged.contains(journal)) publish(journal, framing, payload, rows, committed = true)
    else {
      val h = held.getOrElseUpdate(journal, new HeldRows(framing))
      h.add(rows, payload)
      heldBytes += payload.length
      if (h.count > threshold.messages || h.bytes > threshold.bytes) stage(journal)
      // However many journals a task writes, what it holds unframed stays within HeldBytes:
      // beyond, its largest journal is staged early.
      while (heldBytes > HeldBytes) stage(held.maxBy(_._2.bytes)._1)
    }
    rows += 1
    if (publisher.buffered(journal) >= config.options.flushBytes) flush(journal)
    faultOf(SinkFault.TaskPoints - AgainLate).foreach(f =>
      if (rows == FaultAfterRows) {
        if (f.point == "task-late-after-half") holdAppendsUntil(epoch + 3) else appendAll()
        lost = f.point != "task-after-half"
        throw new IllegalStateException(s"injected task failure in epoch $epoch after $rows rows")
      })
  }

  /** The fault of `points` striking this attempt (test.sinkFault). */
  private def faultOf(points: Set[String]): Option[SinkFault] = config.options.testFault.filter(f =>
    points.exists(f.strikes(_, epoch)) && attempt == 0 && partitionId == 0)

  /** The appends of this attempt, landing once `later` is recorded (test.sinkFault); and now too
    * with `now`.
    */
  private def holdAppendsUntil(later: Long, now: Boolean = false): Unit = {
    val held = scala.collection.mutable.ArrayBuffer[(String, ByteString)]()
    appendAll { (journal, content) =>
      if (now) client.append(journal, content)
      held += journal -> content
    }
    val location = config.intentLog.get
    val intents = location.open(config.hadoopConf.value)
    val landing = new Thread(
      () => {
        while (!intents.contains(location.key(later))) Thread.sleep(20)
        held.foreach { case (journal, content) => client.append(journal, content) }
      },
      s"gazette-sink-late-appends-$epoch"
    )
    landing.setDaemon(true)
    landing.start()
  }

  private def publish(journal: String, framing: Framing, payload: Array[Byte], row: Long, committed: Boolean): Unit = {
    try {
      if (committed) publisher.publishCommitted(journal, framing, payload)
      else publisher.publishUncommitted(journal, framing, payload)
    } catch {
      case e: MessageFormatException =>
        throw GazetteErrors.unframableRow(row, partitionId, journal, e.getMessage, e)
    }
    lastClocks(journal) = clock.current
    firstPayloads.getOrElseUpdate(journal, payload)
  }

  /** From now on `journal`'s rows are staged, as committed messages, starting with those held. */
  private def stage(journal: String): Unit = {
    val index = targets.journals.indexOf(journal)
    val key = config.stagingKey(epoch)
    val file = staging.get.file(key, writeId, partitionId, stageAttempt, attempt, index)
    val token = (key.toSeq :+ writeId :+ file.getName).mkString(".")
    staged(journal) =
      new StagedRunWriter(file, token, staging.get, config.hadoopConf.value, sync = config.intentLog.isDefined)
    val h = held.remove(journal).get
    heldBytes -= h.bytes
    h.foreach((row, payload) => {
      publish(journal, h.framing, payload, row, committed = true);
      if (publisher.buffered(journal) >= config.options.flushBytes) flush(journal)
    })
  }

  /** Frames the rows held for `journal` as the task's own uncommitted run. */
  private def release(journal: String): Unit = held.remove(journal).foreach { h =>
    heldBytes -= h.bytes
    h.foreach((row, payload) => {
      publish(journal, h.framing, payload, row, committed = false);
      if (publisher.buffered(journal) >= config.options.flushBytes) flush(journal)
    })
  }

  override def currentMetricsValues(): Array[CustomTaskMetric] = { counts.rows = rows; counts.report() }

  override def commit(): WriterCommitMessage = {
    GazetteErrors.brokerCalls(faultOf(Set(AgainLate)).fold(appendAll())(_ => holdAppendsUntil(epoch + 1, now = true)))
    counts.rows = rows
    if (skip || !config.options.exactlyOnce)
      return GazetteCommitMessage(publisher.producer.toString, Nil, Nil, unwritable.toMap, counts = counts.commit())
    val runs = staged.toSeq.flatMap { case (j, w) =>
      w.close(j, publisher.producer.toString, lastClocks(j), targets.revisions.getOrElse(j, 0L),
        clock => publisher.ackAt(j, framings(j), firstPayloads(j), clock).intent)
    }
    staged.clear()
    GazetteCommitMessage(
      publisher.producer.toString,
      publisher.buildAckIntents(),
      rollbacks(),
      unwritable.toMap,
      runs,
      partition = partitionId,
      firstAttempt = SinkProducers.isFirst(stageAttempt, attempt),
      counts = counts.commit()
    )
  }

  /** Rolls back what this attempt appended, where possible; a reader would ignore it anyway. */
  override def abort(): Unit = {
    discardStaged()
    if (config.options.exactlyOnce && wrote && !lost) {
      publisher.drain()
      closeSpools()
      try rollbacks().foreach(i => client.append(i.journal, i.intent))
      catch { case NonFatal(e) => log.warn(s"rolling back partition $partitionId of epoch $epoch: $e") }
    }
  }

  // ACKs that abandon this attempt's messages: a stable producer's at its last recorded clock (it
  // publishes no more, and readers drop what it left open); a fresh producer's before its first message.
  private def rollbacks(): Seq[AckIntent] = stable match {
    case Some(p) => written.toSeq.map { case (j, (f, like)) =>
        publisher.ackAt(j, f, like, p.rollbackClock(publisher.producer, j))
      }
    case None => publisher.rollbackIntents()
  }

  override def close(): Unit = { closeSpools(); discardStaged() }

  private def discardStaged(): Unit = { staged.values.foreach(_.discard()); staged.clear() }

  // Appends below raise the client's errors; Spark's calls above see them under a condition.
  private def flush(journal: String): Unit = GazetteErrors.brokerCalls(drain(journal))

  private def drain(journal: String): Unit = publisher.drainTo(journal) { (bytes, offset, length) =>
    if (staged.contains(journal)) {
      staged(journal).write(bytes, offset, length, lastClocks(journal))
      counts.bytesStaged += length
    } else if (config.options.exactlyOnce)
      spools.getOrElseUpdate(journal, new JournalSpool(config.options.flushBytes, SpoolDir)).write(
        bytes, offset, length)
    else { appendCounted(journal, ByteString.copyFrom(bytes, offset, length)); wrote = true }
  }

  private def appendCounted(journal: String, content: ByteString): Unit = {
    val t0 = System.nanoTime()
    client.append(journal, content)
    counts.appended(content.size, System.nanoTime() - t0)
  }

  /** Appends what is buffered and spooled, one append per journal; a staged journal gets nothing
    * from the task.
    */
  private def appendAll(append: (String, ByteString) => Unit = appendCounted): Unit = {
    held.keys.toSeq.foreach(release)
    targets.journals.foreach(drain)
    spools.foreach { case (journal, spool) =>
      if (spool.size > 0) { append(journal, spool.content()); wrote = true }
    }
    closeSpools()
  }

  private def closeSpools(): Unit = {
    spools.values.foreach(s =>
      try s.close()
      catch { case NonFatal(_) => })
    spools.clear()
  }
}

/** A journal's rows held unframed, with their row numbers (for errors), in arrival order. */
private final class HeldRows(val framing: Framing) {
  private val rows = scala.collection.mutable.ArrayBuffer[Long]()
  private val payloads = scala.collection.mutable.ArrayBuffer[Array[Byte]]()
  var bytes = 0L

  def add(row: Long, payload: Array[Byte]): Unit = { rows += row; payloads += payload; bytes += payload.length }

  def count: Int = rows.size

  def foreach(f: (Long, Array[Byte]) => Unit): Unit = rows.indices.foreach(i => f(rows(i), payloads(i)))
}

private[sink] object GazetteDataWriter {
  private val log = LoggerFactory.getLogger(classOf[GazetteDataWriter])

  private val SpoolDir = java.nio.file.Paths.get(System.getProperty("java.io.tmpdir"))

  /** The most a task holds unframed, over all its journals. */
  private val HeldBytes = 64L << 20

  private val AgainLate = "task-appends-again-late"

  /** Where an injected task failure strikes: after this many rows, appended. */
  private val FaultAfterRows = 5L
}
