package io.sparkgazette.spark

import scala.collection.mutable

import io.sparkgazette.client.{Chunk, JournalReader}
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
  private val client = ClientCache(config.client)
  private val framing = Framing.forContentType(range.contentType, config.uuidPointer, config.uuidField)
    .fold(problem => throw GazetteErrors.unsupportedFraming(journal, problem), identity)
  private val toRow = new MessageToRow.Converter(journal, if (config.includeLabels) Some(range.labels) else None)
  private val onMalformed = if (config.failOnMalformed) OnMalformed.Fail else new OnMalformed.Skip
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
    new Sequencer[RawMessage](Map(journal -> position), saved.map(_.producers).getOrElse(Nil), config.sequencerRingSize,
      config.sequencerRingBytes, m => m.bytes.length + EnvelopeOverhead)
  private lazy val messages = open(position, 0, replay = false)
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
              if (!config.readCommitted) { current = env; emitted += 1; return true }
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
        sequencer.startReplay(ReadUncommitted(open(begin, end, replay = true), onMalformed))
      case QueueOutcome.OutsideAlreadyAcked | QueueOutcome.ContinueAlreadyAcked | QueueOutcome.ContinueTxnClockLarger =>
        duplicates += 1
      case _ =>
    }

  private def open(from: Long, until: Long, replay: Boolean): MessageIterator = {
    val reader = client.read(journal, from, until)
    readers += reader
    new MessageIterator(journal, framing, checked(reader, from, replay).map(c => JournalBytes(c.offset, c.content.asReadOnlyByteBuffer())))
  }

  // Chunks as read, with a jump past bytes retention removed turned into a data-loss decision.
  private def checked(reader: JournalReader, from: Long, replay: Boolean): Iterator[Chunk] = {
    var expected = from
    reader.map { c =>
      if (c.offset > expected) {
        val what = s"bytes [$expected, ${c.offset}) were removed before they were ${if (replay) "replayed" else "read"}"
        if (config.failOnDataLoss) throw GazetteErrors.dataLoss(journal, what)
        log.warn(s"journal $journal: $what; skipping them (failOnDataLoss=false)")
        lostBytes += c.offset - expected
      }
      expected = c.end
      if (!replay) bytesRead += c.content.size()
      c
    }
  }

  private def finish(): Unit = if (!finished) {
    finished = true
    store.foreach { s =>
      val (_, producers) = sequencer.checkpoint(config.producerPruneHorizon.toNanos)
      s.save(journal, range.end, SequencerState(position, producers))
    }
  }
}

object JournalRangeReader {
  private val log = LoggerFactory.getLogger(classOf[JournalRangeReader])

  // What a held message costs beyond its bytes: the envelope, its UUID and the array header.
  private val EnvelopeOverhead = 128
}
