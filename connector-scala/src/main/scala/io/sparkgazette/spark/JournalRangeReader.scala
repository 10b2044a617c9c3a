package io.sparkgazette.spark

import scala.collection.mutable

import io.sparkgazette.client.{Backoff, Chunk, JournalReader}
import io.sparkgazette.message._
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.PartitionReader
import org.slf4j.LoggerFactory

/** Reads one [[JournalRange]] in an executor: the messages that begin in `[start, end)`,
  * reading past `end` to finish the last one, and emits what they commit.
  *
  * Read-committed, the range's Sequencer starts from the state saved at `(journal, start)`, so
  * a transaction that began in an earlier batch and is acknowledged in this one is replayed
  * from the journal and emitted here, exactly once; at the end the state at `(journal, end)` is
  * saved for the next batch. Memory is the Sequencer's ring plus read buffers, whatever the
  * range's length.
  */
final class JournalRangeReader(range: JournalRange, config: ReaderConfig) extends PartitionReader[InternalRow] {
  import JournalRangeReader._

  private val journal = range.journal
  private val options = config.options
  private val client = ClientCache(config.client)
  private val framing = Framing.forContentType(range.contentType, options.uuidPointer, options.uuidField)
    .fold(problem => throw GazetteErrors.unsupportedFraming(journal, problem), identity)
  private val toRow = new MessageToRow.Converter(journal, if (options.includeLabels) Some(range.labels) else None)
  private val onMalformed = if (options.failOnMalformed) OnMalformed.Fail else new OnMalformed.Skip
  private val store = config.stateDir.map(new SequencerStateStore(_, config.hadoopConf.value))
  private val readers = mutable.ArrayBuffer[JournalReader]()

  private var bytesRead, emitted, duplicates, replayedBytes, lostBytes = 0L

  private val saved: Option[SequencerState] = store.flatMap { s =>
    s.load(journal, range.start).orElse {
      if (s.hasAny(journal)) throw GazetteErrors.missingSequencerState(journal, range.start, s.location)
      None
    }
  }
  // A batch cut inside a message resumes where the previous batch finished reading it.
  private var position = math.max(range.start, saved.map(_.resume).getOrElse(range.start))
  private val sequencer =
    new Sequencer[RawMessage](Map(journal -> position), saved.map(_.producers).getOrElse(Nil), options.sequencerRingSize,
      options.sequencerRingBytes, m => m.bytes.length + EnvelopeOverhead)
  private lazy val messages: MessageIterator =
    open(position, 0, replay = false, more = offset => offset < range.end || messages.holdsPartial)
  private var current: Envelope[RawMessage] = _
  private var finished = false

  override def next(): Boolean = {
    while (true) {
      sequencer.step() match {
        case Some(env) =>
          if (!MessageToRow.isAck(env)) { current = env; emitted += 1; return true }
        case None =>
          if (position >= range.end || !messages.hasNext) { finish(); return false }
          messages.next() match {
            case Left(m) =>
              position = m.end
              onMalformed(m)
            case Right(env) =>
              position = env.end
              if (!options.readCommitted) { current = env; emitted += 1; return true }
              queue(env)
          }
      }
    }
    false
  }

  override def get(): InternalRow = toRow(current)

  override def currentMetricsValues(): Array[CustomTaskMetric] = SourceMetrics.task(Map(
    SourceMetrics.BytesRead -> bytesRead,
    SourceMetrics.MessagesEmitted -> emitted,
    SourceMetrics.DuplicatesDropped -> duplicates,
    SourceMetrics.RolledBackMessages -> sequencer.discarded,
    SourceMetrics.ReplayedBytes -> replayedBytes,
    SourceMetrics.MalformedSkipped -> (onMalformed match { case s: OnMalformed.Skip => s.messages; case _ => 0L }),
    SourceMetrics.LostBytes -> lostBytes
  ))

  override def close(): Unit = readers.foreach(r => try r.close() catch { case _: Exception => })

  private def queue(env: Envelope[RawMessage]): Unit =
    sequencer.queue(env) match {
      case QueueOutcome.AckCommitReplay =>
        val (_, begin, end) = sequencer.replayRange
        replayedBytes += end - begin
        sequencer.startReplay(ReadUncommitted(open(begin, end, replay = true, more = _ < end), onMalformed))
      case QueueOutcome.OutsideAlreadyAcked | QueueOutcome.ContinueAlreadyAcked | QueueOutcome.ContinueTxnClockLarger =>
        duplicates += 1
      case _ =>
    }

  private def open(from: Long, until: Long, replay: Boolean, more: Long => Boolean): MessageIterator =
    new MessageIterator(journal, framing, chunks(from, until, replay, more).map(c => JournalBytes(c.offset, c.content.asReadOnlyByteBuffer())))

  /** Chunks from `from` (to `until`, if > 0) while `more` says bytes are still needed. A
    * non-blocking read can end short of bytes that exist: after a failover, the replica serving
    * it may not have caught up with the head the driver saw. The read is then opened again
    * until the bytes arrive or the client's retry timeout passes. A jump past bytes retention
    * removed becomes a data-loss decision.
    */
  private def chunks(from: Long, until: Long, replay: Boolean, more: Long => Boolean): Iterator[Chunk] = new Iterator[Chunk] {
    private var expected = from
    private var reader = read(from)
    private val backoff = new Backoff(config.client.retryTimeout)

    private def read(offset: Long): JournalReader = {
      val r = client.read(journal, offset, until)
      readers += r
      r
    }

    override def hasNext: Boolean = {
      while (!reader.hasNext && more(expected)) {
        if (!backoff.pause())
          throw new IllegalStateException(s"journal $journal: reads end at offset $expected, before the bytes this " +
            s"batch needs (range [${range.start}, ${range.end})); the journal's brokers did not serve them in time")
        log.info(s"journal $journal: read ended at $expected, short of what the batch needs; reading again")
        reader.close()
        reader = read(expected)
      }
      reader.hasNext
    }

    override def next(): Chunk = {
      val c = reader.next()
      if (c.offset > expected) {
        val what = s"bytes [$expected, ${c.offset}) were removed before they were ${if (replay) "replayed" else "read"}"
        if (options.failOnDataLoss) throw GazetteErrors.dataLoss(journal, what)
        log.warn(s"journal $journal: $what; skipping them (failOnDataLoss=false)")
        lostBytes += c.offset - expected
      }
      expected = c.end
      backoff.reset()
      if (!replay) bytesRead += c.content.size()
      c
    }
  }

  private def finish(): Unit = if (!finished) {
    finished = true
    store.foreach { s =>
      val (_, producers) = sequencer.checkpoint(options.producerPruneHorizon.toNanos)
      s.save(journal, range.end, SequencerState(position, producers))
    }
  }
}

object JournalRangeReader {
  private val log = LoggerFactory.getLogger(classOf[JournalRangeReader])

  // What a held message costs beyond its bytes: the envelope, its UUID and the array header.
  private val EnvelopeOverhead = 128
}
