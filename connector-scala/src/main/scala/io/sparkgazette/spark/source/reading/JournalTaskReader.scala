package io.sparkgazette.spark
package source
package reading

import scala.collection.mutable

import io.sparkgazette.client.{BrokerUnavailableException, GazetteException => ClientException}
import io.sparkgazette.message.MalformedMessageException
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.source.offsets.{JournalRange, JournalTask, StateRef}
import io.sparkgazette.spark.source.state._
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.PartitionReader

/** Reads a [[JournalTask]] in an executor: its ranges one after the other, each by a
  * [[JournalRangeReader]].
  *
  * In a stream, each range starts from the state the driver found for it (read at the position
  * the driver names, without listing anything), and at the end the task saves, in one file, the
  * state at the end of every range, and the states it had to rebuild at their starts. The file
  * is named for the task's ranges and written only if absent: when an earlier attempt saved it,
  * this attempt starts from the states that attempt rebuilt, and saves nothing, so every attempt
  * agrees with the first.
  */
private[source] final class JournalTaskReader(task: JournalTask, config: ReaderConfig)
    extends PartitionReader[InternalRow] {
  private val store = config.stateDir.map(new SequencerStateStore(_, config.hadoopConf.value))
  // The states an earlier attempt of this task saved at the starts of its ranges, by journal.
  private val earlier: Option[Map[(String, Long), StateRef]] =
    for (s <- store; f <- task.statesFile; refs <- s.index(f))
      yield refs.map(r => (r.journal, r.offset) -> r).toMap
  private val ranges = task.ranges.iterator
  // The next ranges' readers, their Reads already sent: a task of many small ranges waits for
  // one broker round trip at a time only when it must.
  private val ahead = mutable.Queue[JournalRangeReader]()
  private var current: JournalRangeReader = _
  private val totals = new Array[Long](SourceMetrics.Names.size) // of the ranges done, by SourceMetrics.Names
  private val states = mutable.ArrayBuffer[(String, Long, SequencerState)]()
  private var newestClock = 0L // of the ranges done
  private var visible: Option[Boolean] = None
  private var finished = false

  // The message layer fails a read on a malformed message (failOnMalformed) with an error of its
  // own; users get it with the connector's condition, the original as its cause.
  // So do the client's errors (retries exhausted, a broker's refusal). A try, not
  // GazetteErrors.brokerCalls: next() runs once a row, and a by-name argument is an allocation.
  override def next(): Boolean =
    try advance()
    catch {
      case e: MalformedMessageException =>
        val m = e.malformed
        throw GazetteErrors.malformedMessage(m.journal, m.begin, m.end, m.reason, e)
      case e: BrokerUnavailableException => throw GazetteErrors.brokerUnavailable(e)
      case e: ClientException => throw GazetteErrors.brokerRefused(e)
    }

  private def advance(): Boolean = {
    while (true) {
      if (current != null) {
        if (current.next()) return true
        done(current)
        current = null
      }
      fill()
      if (ahead.isEmpty) { finish(); return false }
      current = ahead.dequeue()
      fill()
    }
    false
  }

  private def fill(): Unit = {
    var bytes = ahead.iterator.map(_.range.bytes).sum
    while (ranges.hasNext && ahead.size < JournalTaskReader.ReadAhead &&
      (ahead.isEmpty || bytes < JournalTaskReader.ReadAheadBytes)) {
      val r = ranges.next()
      val reader = new JournalRangeReader(r, config, startOf(r))
      ahead.enqueue(reader)
      bytes += r.bytes
      reader.prefetch()
    }
  }

  override def get(): InternalRow = current.get()

  override def currentMetricsValues(): Array[CustomTaskMetric] = {
    val now = if (current != null) current.metricArray else new Array[Long](totals.length)
    var i = 0
    while (i < now.length) { now(i) += totals(i); i += 1 }
    SourceMetrics.task(now)
  }

  override def close(): Unit = {
    config.newest.foreach(_.add(if (current != null) math.max(newestClock, current.newestClock) else newestClock))
    if (current != null) current.close()
    ahead.foreach(_.close())
    store.foreach(_.close())
  }

  private def startOf(r: JournalRange): RangeStart = r.piece match {
    case Some(p) if !r.first =>
      p.before match {
        case Some(before) => RangeStart.Within(rangeStart(r), before, p.from)
        case None if config.options.readCommitted =>
          throw GazetteErrors.internal(s"a piece of ${r.journal} from ${p.from}, read committed, has no states")
        case None => RangeStart.LineAt(p.from)
      }
    case _ => rangeStart(r)
  }

  // Where the range's first message is read from: the state saved at its start, or one to rebuild.
  private def rangeStart(r: JournalRange): RangeStart = store match {
    case None => RangeStart.Saved(SequencerState(r.start, Nil))
    case Some(s) =>
      val same = (ref: StateRef) => ref.revision == r.revision && ref.origin == r.origin
      earlier.flatMap(_.get((r.journal, r.start))).filter(same).orElse(r.base.filter(_.offset == r.start)) match {
        case Some(ref) => RangeStart.Saved(s.load(ref))
        case None =>
          r.base match {
            case Some(b) => RangeStart.Rebuild(Some(b.offset -> s.load(b)))
            case None =>
              if (r.origin >= 0 && !visible.getOrElse { val v = s.visible; visible = Some(v); v })
                throw GazetteErrors.checkpointNotVisible(
                  r.journal, s.location, java.net.InetAddress.getLocalHost.getHostName)
              RangeStart.Rebuild(None)
          }
      }
  }

  private def done(reader: JournalRangeReader): Unit = {
    val values = reader.metricArray
    for (i <- totals.indices) totals(i) += values(i)
    newestClock = math.max(newestClock, reader.newestClock)
    reader.close()
    val r = reader.range
    reader.rebuilt.foreach(state => states += ((r.journal, r.start, state)))
    reader.endState.foreach(state => states += ((r.journal, r.end, state)))
  }

  private def finish(): Unit = if (!finished) {
    finished = true
    for (s <- store; f <- task.statesFile if earlier.isEmpty && states.nonEmpty) s.save(f, states.toSeq)
  }
}

private[source] object JournalTaskReader {

  /** At most this many ranges are read ahead of the current one, and their bytes at most: */
  val ReadAhead = 64
  val ReadAheadBytes: Long = 8L << 20
}
