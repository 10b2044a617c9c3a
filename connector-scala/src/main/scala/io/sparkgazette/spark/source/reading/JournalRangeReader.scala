package io.sparkgazette.spark
package source
package reading

import scala.collection.mutable
import scala.concurrent.duration._

import io.sparkgazette.client.{Backoff, Chunk, FragmentHoles, JournalReader}
import io.sparkgazette.message._
import io.sparkgazette.spark.clients.ClientCache
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.source.offsets.JournalRange
import io.sparkgazette.spark.source.rows.MessageToRow
import io.sparkgazette.spark.source.state._
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.PartitionReader
import org.slf4j.LoggerFactory

/** Reads one [[JournalRange]] in an executor: the messages that end in `(start, end]`, and
  * emits what they commit. A message that begins before `end` and ends after it (or is still
  * being written) is left to the next range, so what a range holds depends on its offsets alone.
  *
  * Read-committed, the range's Sequencer starts from `from`: the state saved at `(journal,
  * start)`, so that a transaction that began in an earlier batch and is acknowledged in this one
  * is replayed from the journal and emitted here, exactly once. When no state was saved at
  * `start` (the previous batch was never read to its end: a `limit`, a batch nobody read, a
  * cancelled task), it is rebuilt by sequencing, without emitting, from the newest earlier state
  * or from the journal's origin ([[rebuilt]]). Once read, [[endState]] is the state at `end`,
  * for the next batch; the [[JournalTaskReader]] saves both. Memory is the Sequencer's ring
  * plus read buffers, whatever the range's length.
  */
private[source] final class JournalRangeReader(val range: JournalRange, config: ReaderConfig, from: RangeStart,
    firstPass: Boolean = false)
    extends PartitionReader[InternalRow] {
  import JournalRangeReader._

  private val journal = range.journal
  private val options = config.options
  private val client = ClientCache(config.client)
  private val decoder = new JournalDecoder(range, config, rows = !firstPass)
  private val onMalformed = decoder.onMalformed
  private var row: InternalRow = _
  private val readers = mutable.ArrayBuffer[JournalReader]()

  private var bytesRead, emitted, duplicates, replayedBytes, lostBytes, rebuiltBytes, openAtStart = 0L

  /** The greatest UUID clock of the messages emitted (0: none). */
  var newestClock = 0L
  // The last hole, [holeFrom, skippedTo), a read that moves the resume offset skipped (the
  // range's own read, or a rebuild): the next range resumes past it, rather than reading into it
  // and counting it again.
  private var holeFrom, skippedTo = -1L

  /** The state at `start` this reader rebuilt, if it had to. */
  var rebuilt: Option[SequencerState] = None

  /** The state at `end`, once every message of the range is read. */
  var endState: Option[SequencerState] = None

  // A rebuild that fails (data lost, a malformed message) closes the reads it opened: the
  // task never gets this reader to close.
  private val saved: SequencerState =
    try from match {
        case RangeStart.Saved(state) => state
        case RangeStart.Rebuild(base) => rebuild(base)
        case RangeStart.LineAt(at) => SequencerState(at, Nil, range.revision, range.origin)
        case RangeStart.Within(start, before, at) =>
          val first = start match {
            case RangeStart.Saved(state) => state
            case RangeStart.Rebuild(base) => rebuild(base)
            case other => throw GazetteErrors.internal(s"a piece of $journal starts within $other")
          }
          val producers = before(journal, first.producers)
          openAtStart = producers.count(_.begin != -1).toLong
          SequencerState(at, producers, range.revision, range.origin)
      }
    catch { case e: Throwable => close(); throw e }
  private var position = saved.resume

  /** The state at the range's start: saved, rebuilt, or carried into a piece. */
  def startState: SequencerState = saved
  private val sequencer = decoder.sequencer(position, saved.producers)
  // A piece of a split range reads its messages up to the first that begins at `until`.
  private val until = range.piece.fold(Long.MaxValue)(_.until)
  private var lineStart: LineStart = _
  // A piece needs the bytes past its end only up to the message that begins there: Reads that ran on to
  // the range's end would have the broker stream up to a flow-control window more, for every piece.
  private val readUntil = if (until < range.end) until + JournalRangeReader.PastPieceEnd else Long.MaxValue
  private lazy val messages: MessageIterator = from match {
    case RangeStart.LineAt(at) =>
      lineStart = new LineStart(at, chunks(at - 1, range.end, replay = false, advances = true, readUntil).map(toBytes))
      iterator(lineStart, math.min(range.end, readUntil))
    case RangeStart.Within(_, _, at) =>
      lineStart = new LineStart(at, chunks(at - 1, range.end, replay = false, advances = true, readUntil).map(toBytes))
      iterator(lineStart, math.min(range.end, readUntil))
    case _ =>
      iterator(chunks(position, range.end, replay = false, advances = true, readUntil).map(toBytes),
        math.min(range.end, readUntil))
  }
  // Whether the messages ran out before `until`: this reader holds the range's last message.
  private var readToEnd = false
  private var current: Envelope[RawMessage] = _
  private var finished = false
  private var lookingAhead = false

  // A batch range's transactions open at its end, and the messages after it being read for
  // their acknowledgements: what the range emits of them is what ends within it.
  private var ahead: Set[(String, ProducerId)] = Set.empty
  private lazy val beyond: MessageIterator = open(range.end, range.lookAhead, replay = true)

  override def next(): Boolean = {
    while (true) {
      sequencer.step() match {
        case Some(env) =>
          if (!MessageToRow.isAck(env) && env.end <= range.end && emit(env)) return true
        case None if ahead.nonEmpty || lookingAhead =>
          ahead = ahead.filter { case (j, p) => sequencer.isOpen(j, p) }
          if (ahead.isEmpty || !beyond.hasNext) { finish(); return false }
          beyond.next() match {
            case Left(_) =>
            case Right(env) => queue(sequencer, env, replay = true)
          }
        case None =>
          if (!messages.hasNext) {
            // A piece whose first line begins at `until` (or at the range's end) holds none of the
            // range's last messages: the piece before it read them, and saves the state.
            readToEnd = lineStart == null || lineStart.start >= 0 && lineStart.start < math.min(until, range.end)
            // Batch queries carry no state to a next range: a transaction open at the end is
            // emitted here, what of it ends in the range, if its ACK comes before `lookAhead` (one
            // open before this piece of a split range too).
            if (options.readCommitted && range.lookAhead > range.end && readToEnd) {
              ahead = sequencer.openProducers
              lookingAhead = ahead.nonEmpty
              if (!lookingAhead) { finish(); return false }
            } else { finish(); return false }
          } else messages.next() match {
            case Left(m) if m.begin >= until => finish(); return false
            case Right(env) if env.begin >= until => finish(); return false
            case Left(m) =>
              position = m.end
              onMalformed(m)
            case Right(env) =>
              position = env.end
              if (!options.readCommitted) { if (emit(env)) return true }
              else queue(sequencer, env, replay = true)
          }
      }
    }
    false
  }

  override def get(): InternalRow = if (decoder.typed) row else decoder.toRow(current)

  // Whether `env` is a row: typed, one whose payload does not parse is malformed instead.
  private def emit(env: Envelope[RawMessage]): Boolean = {
    if (env.clock > newestClock) newestClock = env.clock
    if (!decoder.typed) { current = env; emitted += 1; true }
    else {
      row = decoder.typedRow(env)
      if (row != null) emitted += 1
      row != null
    }
  }

  /** Read committed, what this piece's messages do to the producers' states, found without
    * sequencing them or building rows (by a reader made with `firstPass`, which keeps no message's
    * bytes): a first pass for the pieces after it. None once the
    * transfer holds more than `limit` producers and moves. Malformed messages touch no state:
    * the pass leaves them to the read proper, which fails on them or skips them.
    */
  def transfer(limit: Long): Option[StateTransfer] = {
    val t = new StateTransfer()
    try {
      while (messages.hasNext) {
        messages.next() match {
          case Left(m) => if (m.begin >= until) return Some(t)
          case Right(env) =>
            if (env.begin >= until) return Some(t)
            t.add(env)
            if (t.size > limit) return None
        }
      }
      Some(t)
    } finally close()
  }

  override def currentMetricsValues(): Array[CustomTaskMetric] = SourceMetrics.task(metricArray)

  /** Starts reading the range's bytes, ahead of [[next]]. */
  def prefetch(): Unit = {
    messages
    readers.lastOption.foreach(_.prefetch())
  }

  override def close(): Unit = readers.foreach(r =>
    try r.close()
    catch { case _: Exception => })

  // Replays what a commit needs from before the ring, unless only the producers' states matter.
  private def queue(sequencer: Sequencer[RawMessage], env: Envelope[RawMessage], replay: Boolean): Unit =
    sequencer.queue(env) match {
      case QueueOutcome.AckCommitReplay =>
        val (_, begin, end) = sequencer.replayRange
        if (replay) {
          replayedBytes += end - begin
          sequencer.startReplay(ReadUncommitted(open(begin, end, replay = true), OnMalformed.forReplay(onMalformed)))
        } else sequencer.startReplay(Iterator.empty)
      case QueueOutcome.OutsideAlreadyAcked | QueueOutcome.ContinueAlreadyAcked | QueueOutcome.ContinueTxnClockLarger =>
        if (replay) duplicates += 1
      case _ =>
    }

  /** The state at `range.start` when none was saved there: the newest earlier state (or the
    * empty one at the journal's origin), carried forward by sequencing the messages in between.
    */
  private def rebuild(nearest: Option[(Long, SequencerState)]): SequencerState = {
    val origin = if (range.origin >= 0 && range.origin <= range.start) range.origin else range.start
    val (at, base) = nearest.getOrElse(origin -> SequencerState(origin, Nil, range.revision, range.origin))
    if (at == range.start) return base
    val sequencer = decoder.sequencer(base.resume, base.producers)
    var resume = base.resume
    val skipped = new OnMalformed.Skip
    val messages = open(base.resume, range.start, replay = true, advances = true)
    while (messages.hasNext) {
      messages.next() match {
        case Left(m) =>
          resume = m.end
          if (options.failOnMalformed) onMalformed(m) else skipped(m)
        case Right(env) =>
          resume = env.end
          if (options.readCommitted) {
            queue(sequencer, env, replay = false)
            while (sequencer.step().isDefined) {}
          }
      }
    }
    resume = pastHole(resume)
    rebuiltBytes += resume - base.resume
    val (_, producers) = sequencer.checkpoint(options.producerPruneHorizon.toNanos)
    val state = SequencerState(resume, producers, range.revision, range.origin)
    rebuilt = Some(state)
    state
  }

  private def open(from: Long, until: Long, replay: Boolean, advances: Boolean = false): MessageIterator =
    iterator(chunks(from, until, replay, advances).map(toBytes), until)

  private def toBytes(c: Chunk): JournalBytes = JournalBytes(c.offset, c.content.asReadOnlyByteBuffer())

  // A first pass needs no message's bytes, and copies none. Where a malformed message fails the read
  // (failOnMalformed), it takes every line for well-formed: one that is not fails the task that reads
  // its piece, and so the batch, which no piece's states then reach. With a corrupt-record column the
  // framing checks every line anyway (JournalDecoder), so that a torn line never counts with a UUID it
  // seems to carry.
  // The driver saw the bytes up to `writtenUntil` written: the framing may take them before it looks
  // at a line. Not past a piece's first Read: a piece wants only the message that begins at its end.
  private def iterator(bytes: Iterator[JournalBytes], writtenUntil: Long): MessageIterator =
    decoder.messages(bytes, validate = !(options.failOnMalformed && firstPass), writtenUntil = writtenUntil)

  /** Chunks of `[from, until)`. The driver saw these bytes before it planned the range, so a
    * read that ends short of them comes from a replica that lags after a failover: it is opened
    * again until the bytes arrive or the client's retry timeout, plus the journal's refresh
    * interval, passes. A jump over bytes that retention removed is a data-loss decision, taken at
    * once.
    *
    * The first Read ends at `readUntil`; each after it reaches twice as far again, up to `until`,
    * as long as the caller takes more.
    */
  private def chunks(from: Long, until: Long, replay: Boolean, advances: Boolean,
      readUntil: Long = Long.MaxValue): Iterator[Chunk] =
    new Iterator[Chunk] {
      private var expected = from
      private var bound = math.min(until, readUntil)
      private var reach = JournalRangeReader.PastPieceEnd
      private var reader = read(from)
      private var backoff = new Backoff(config.client.retryTimeout)
      // A broker that has just taken the journal over serves the bytes once its next append or
      // listing of the store catches it up: without a hole, a read waits that much longer (as the
      // driver does, see StaleHeads).
      private var extended = false

      private def read(offset: Long): JournalReader = {
        // A hole skipped (failOnDataLoss=false) can leave the read past its bound.
        if (bound < offset) bound = math.min(until, offset + reach)
        val r = client.read(journal, offset, bound)
        readers += r
        r
      }

      override def hasNext: Boolean = {
        while (!reader.hasNext && expected < until) {
          if (expected >= bound) {
            reach = math.min(reach * 2, 1L << 30)
            bound = math.min(until, expected + reach)
          } else if (reader.offset > expected) skip(expected, math.min(reader.offset, until))
          else if (backoff.pause())
            log.info(s"journal $journal: read ended at $expected, short of what the batch needs; reading again")
          else holeEnd(expected) match {
            case Some(next) => skip(expected, math.min(next, until)); backoff.reset()
            case None if !extended && range.refreshIntervalMs > 0 =>
              extended = true
              backoff = new Backoff(range.refreshIntervalMs.millis)
            case None if reader.writeHead >= 0 && reader.writeHead < expected =>
              // The driver saw these bytes; the journal no longer has them (see StaleHeads).
              skip(
                expected,
                until,
                s"the journal's write head went back to ${reader.writeHead} and stayed there, so " +
                  s"bytes [$expected, $until) the batch was planned with are gone"
              )
            case None =>
              throw GazetteErrors.readCutShort(journal, expected, range.start, range.end)
          }
          if (expected < until) {
            reader.close()
            reader = read(expected)
          }
        }
        expected < until && reader.hasNext
      }

      override def next(): Chunk = {
        val c = reader.next()
        if (c.offset > expected) skip(expected, c.offset)
        expected = c.end
        if (extended) { backoff = new Backoff(config.client.retryTimeout); extended = false }
        else backoff.reset()
        if (!replay) bytesRead += c.content.size()
        c
      }

      /** Where the bytes resume after a hole at `at` in the journal's fragments: brokers answer a
      * read there as one at the write head (they jump over a hole only once the fragment after it
      * is hours old, in case a fragment is on its way to the store), so once the retry budget is
      * spent, a hole that ListFragments still shows is bytes removed from the store.
      */
      private def holeEnd(at: Long): Option[Long] = FragmentHoles.resume(client, journal, at).filter(_ > at)

      private def skip(from: Long, to: Long, why: String = ""): Unit = {
        val what = if (why.nonEmpty) why
        else s"bytes [$from, $to) were removed before they were ${if (replay) "replayed" else "read"}"
        if (options.failOnDataLoss) throw GazetteErrors.dataLoss(journal, what)
        log.warn(s"journal $journal: $what; skipping them (failOnDataLoss=false)")
        lostBytes += to - from
        if (advances && to > skippedTo) {
          if (from > skippedTo) holeFrom = from
          skippedTo = to
        }
        expected = to
      }
    }

  /** Where reading resumes after the messages read through `read`: past a hole skipped after
    * them. Bytes between them and the hole began a message the hole cut off: lost with it.
    */
  private def pastHole(read: Long): Long =
    if (skippedTo <= read) read
    else {
      if (holeFrom > read) {
        log.warn(
          s"journal $journal: the message at $read, cut off by bytes [$holeFrom, $skippedTo) that were removed, " +
            "is lost (failOnDataLoss=false)")
        lostBytes += holeFrom - read
      }
      skippedTo
    }

  private def finish(): Unit = if (!finished) {
    finished = true
    if (config.stateDir.isDefined && readToEnd) {
      val (_, producers) = sequencer.checkpoint(options.producerPruneHorizon.toNanos)
      // A piece that found its first line past the last message it read starts the next range.
      val read = pastHole(position)
      val resume = if (lineStart != null) math.max(read, lineStart.start) else read
      endState = Some(SequencerState(resume, producers, range.revision, range.origin))
    }
  }

  /** The task metrics so far, in the order of [[SourceMetrics.Names]]. */
  def metricArray: Array[Long] = Array(
    bytesRead,
    emitted,
    duplicates,
    sequencer.discarded,
    replayedBytes,
    decoder.malformedSkipped,
    lostBytes,
    rebuiltBytes,
    readers.iterator.map(_.bytesFromStore).sum,
    readers.iterator.map(_.bytesFromBrokers).sum,
    readers.iterator.map(_.storeFallbacks.toLong).sum,
    openAtStart
  )
}

/** Where a range's Sequencer starts: a state saved at its start, or one to rebuild from the
  * newest earlier state (its offset and the state), or from the journal's origin; or, for a
  * piece of a split range, at a line start.
  */
private[source] sealed trait RangeStart
private[source] object RangeStart {
  final case class Saved(state: SequencerState) extends RangeStart
  final case class Rebuild(base: Option[(Long, SequencerState)]) extends RangeStart

  /** A piece of a split range, read uncommitted: its first message begins at the first line start at or after `at`. */
  final case class LineAt(at: Long) extends RangeStart

  /** A piece of a split range, read committed: it begins as [[LineAt]] does, from the state at
    * the range's start (`start`, saved or to rebuild) carried through `before`, the transfer of the
    * range's messages before the piece.
    */
  final case class Within(start: RangeStart, before: StateTransfer, at: Long) extends RangeStart
}

private[source] object JournalRangeReader {
  private val log = LoggerFactory.getLogger(classOf[JournalRangeReader])

  // How far past its end a piece of a split range reads at first: the message that crosses the end
  // and the one after it, which tells the piece it is done.
  private val PastPieceEnd = 64L << 10
}
