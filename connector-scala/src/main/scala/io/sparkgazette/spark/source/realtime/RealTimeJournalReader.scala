package io.sparkgazette.spark
package source
package realtime

import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.{LinkedBlockingQueue, TimeUnit}

import scala.collection.mutable

import io.sparkgazette.client.protocol.Status
import io.sparkgazette.client.{Backoff, BrokerStatusException, BrokerUnavailableException, JournalReader}
import io.sparkgazette.client.{GazetteException => ClientException}
import io.sparkgazette.message._
import io.sparkgazette.spark.clients.{ClientCache, TaskThreads}
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.handoff.{RealTimeReads, SequencedMessages}
import io.sparkgazette.spark.source.offsets.{JournalPosition, JournalRange, SourceOptions}
import io.sparkgazette.spark.source.reading.{JournalDecoder, ReaderConfig, SourceMetrics}
import io.sparkgazette.spark.source.rows.MessageToRow
import io.sparkgazette.spark.source.state.SequencerStateStore
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.connector.read.streaming.PartitionOffset
import org.slf4j.LoggerFactory

/** Reads a [[RealTimeTask]] for a whole real-time batch: one Read kept open per journal (each on
  * a thread of its own, which frames the bytes into messages as they are appended), and the
  * messages sequenced here, read committed as a micro-batch's are, so that each committed message
  * is a row as soon as its transaction's ACK is read. The rows and columns are a micro-batch's.
  *
  * When time is up, [[getOffset]] is where each journal stands: the end of the last message
  * sequenced and the producers' states there. The engine may end the batch between two rows of
  * one commit (it checks the time before it asks for a row); the journal then stands before
  * that commit's ACK, with the committing producer's state moved past the rows already emitted
  * (its last clock taken for acknowledged, its transaction beginning after them), so the next
  * batch reads the ACK again and emits only the rest.
  *
  * Spark's real-time interface (4.1 and newer) reaches it through `RealTimePartitionReader`, in
  * the 4.x build's own sources, so this compiles on every Spark line.
  */
private[source] final class RealTimeJournalReader(task: RealTimeTask, config: ReaderConfig)
    extends PartitionReader[InternalRow] {
  import RealTimeJournalReader._

  private val options = config.options
  private val client = ClientCache(config.client)
  private val events = new LinkedBlockingQueue[Event](QueueCapacity)
  // What the queued messages weigh: the feeds wait for room, so that large messages do not fill an
  // executor's memory however many fit in the queue.
  private val budget = new ByteBudget(readAheadBytes(options))
  @volatile private var closed = false
  private var started = false
  private val tails: IndexedSeq[Tail] =
    try task.journals.zipWithIndex.map { case (j, i) => new Tail(j, i) }.toIndexedSeq
    catch { case e: Throwable => close(); throw e }
  // The sequence clocks of the committed messages emitted last, for real-time writes.
  private val sequenced = new SequencedMessages()
  RealTimeReads.register(config.stateDir.fold("")(SequencerStateStore.placeOf), task.journals.map(_.range.journal),
    options.readCommitted, sequenced)
  // The journal whose commit is being stepped out, if any; the row to hand out.
  private var current: Tail = _
  private var row: InternalRow = _
  // The clock of the row's message (0: none): its publish time is the row's arrival time.
  private var clock = 0L
  private var newestClock = 0L

  // Spark asks a real-time reader through nextWithTimeout only; this waits for a row without end.
  override def next(): Boolean = nextWithin(System.currentTimeMillis(), Long.MaxValue / 4)

  /** Whether a row is ready within `timeoutMs` of `startTimeMs`. */
  def nextWithin(startTimeMs: Long, timeoutMs: Long): Boolean =
    try {
      if (!started) { started = true; tails.foreach(_.startFeed()) }
      advance(startTimeMs + timeoutMs)
    } catch {
      case e: MalformedMessageException =>
        val m = e.malformed
        throw GazetteErrors.malformedMessage(m.journal, m.begin, m.end, m.reason, e)
      case e: BrokerUnavailableException => throw GazetteErrors.brokerUnavailable(e)
      case e: ClientException => throw GazetteErrors.brokerRefused(e)
    }

  // Whether a row is ready by `deadline`: the rest of a commit first, then the next message read.
  private def advance(deadline: Long): Boolean = {
    while (true) {
      if (current != null) {
        current.sequencer.step() match {
          case Some(env) =>
            val t = current
            t.stepped = env
            val out = !MessageToRow.isAck(env) && { t.sequence(env); t.emit(env) }
            // The message that commits is the last one out: the commit is completed at once, so
            // that where the journal stands never depends on whether Spark asks for a row again.
            if (t.commits(env)) {
              if (t.sequencer.step().isDefined) throw GazetteErrors.internal(s"a commit of ${t.journal} went on")
              t.settle()
              current = null
            }
            if (out) return true
          case None =>
            current.settle()
            current = null
        }
      } else {
        val left = deadline - System.currentTimeMillis()
        if (left <= 0) return false
        val event = events.poll(left, TimeUnit.MILLISECONDS)
        if (event == null) return false
        budget.release(weight(event))
        event match {
          case Failed(e) => throw e
          case Read(i, Left(m)) =>
            val t = tails(i)
            t.position = m.end
            t.onMalformed(m)
          case Read(i, Right(env)) =>
            val t = tails(i)
            if (!options.readCommitted) {
              t.position = env.end
              if (t.emit(env)) return true
            } else if (t.take(env)) current = t
        }
      }
    }
    false
  }

  override def get(): InternalRow = row

  /** When the row's message was published, in epoch milliseconds, where its UUID tells. */
  def arrivalTimeMs: Option[Long] = if (clock == 0) None else Some(Clock.toInstant(clock).toEpochMilli)

  /** Where each journal stands: what the batch read, for its next one to start from. */
  def getOffset: PartitionOffset = {
    config.newest.foreach(_.add(newestClock))
    val reached = tails.map(t => t.journal -> t.reached)
    task.carried ++ JournalsReached(
      reached.map { case (j, (p, _)) => j -> p }.toMap,
      if (options.readCommitted) reached.map { case (j, (_, s)) => j -> s }.toMap
      else tails.map(_.journal -> Seq.empty[ProducerState]).toMap,
      // Spark (4.3) asks the reader it wraps for no task metrics: they reach the driver here.
      SourceMetrics.Names.zip(metricValues()).toMap
    )
  }

  /** Bytes of messages read ahead and not yet sequenced (for tests). */
  private[source] def readAhead: Long = budget.used

  /** Snapshots of the producers' states taken so far (for tests). */
  private[source] def snapshots: Long = tails.map(_.snapshots).sum

  /** Replays' Reads still open (for tests). */
  private[source] def openReplays: Int = tails.map(_.openReplays).sum

  override def currentMetricsValues(): Array[CustomTaskMetric] = SourceMetrics.task(metricValues())

  private def metricValues(): Array[Long] = {
    val values = new Array[Long](SourceMetrics.Names.size)
    tails.foreach { t =>
      values(0) += t.bytesRead.get()
      values(1) += t.emitted
      values(2) += t.duplicates
      values(3) += t.sequencer.discarded
      values(4) += t.replayedBytes
      values(5) += t.malformedSkipped
      values(6) += t.lostBytes.get()
    }
    values
  }

  override def close(): Unit = {
    config.newest.foreach(_.add(newestClock))
    closed = true
    if (tails != null) tails.foreach(_.stop())
  }

  /** One journal of the task: its Read (on [[feed]]), its Sequencer, and where it stands. */
  private final class Tail(spec: RealTimeJournal, index: Int) {
    val range: JournalRange = spec.range
    val journal: String = range.journal
    private val decoder = new JournalDecoder(range, config)
    val onMalformed: OnMalformed = decoder.onMalformed
    def malformedSkipped: Long = decoder.malformedSkipped
    private val start = RealTimeStart(spec, config)
    private val replays = mutable.ArrayBuffer[JournalReader]()
    @volatile private var reader: JournalReader = _
    // How long the feed waits before it reads the journal, suspended, again (0: not suspended).
    private var pollMs = 0L

    val bytesRead, lostBytes = new AtomicLong()
    var emitted, duplicates, replayedBytes, snapshots = 0L
    def openReplays: Int = replays.size

    /** The end of the last message taken from the feed. */
    var position: Long = start.resume
    val sequencer: Sequencer[RawMessage] = decoder.sequencer(position, start.producers)
    // The commit being stepped: the message that commits it; for an ACK, the position before it
    // and the committing producer's state there (-1 and None otherwise); and the last message
    // stepped out of it. An ACK changes no other producer's state, so the states before it are
    // the current ones with that one put back: found only if the batch ends inside the commit,
    // not at every ACK, for a snapshot of every producer costs O(P log P).
    private var committing: Envelope[RawMessage] = _
    private var ackedFrom = -1L
    private var acking: Option[ProducerState] = None
    var stepped: Envelope[RawMessage] = _

    // Started with the task's first row asked for, on a pooled thread.
    @volatile private var feed_ : TaskThreads.Running = _
    def startFeed(): Unit = feed_ = TaskThreads.start(s"gazette-real-time-$journal")(read())

    def emit(env: Envelope[RawMessage]): Boolean = {
      clock = env.clock
      if (clock > newestClock) newestClock = clock
      build(env)
    }

    /** Records the sequence clock of `env`, just stepped out of a commit (see [[SequencedMessages]]). */
    def sequence(env: Envelope[RawMessage]): Unit =
      if (env.clock != 0)
        sequenced.add(journal, env.producer.value, env.clock,
          Sequencer.nextSequenceClock(sequencer.sequenceClock(journal, env.producer), env.clock))

    private def build(env: Envelope[RawMessage]): Boolean = {
      row = if (decoder.typed) decoder.typedRow(env) else decoder.toRow(env)
      if (row != null) emitted += 1
      row != null
    }

    /** Sequences a message; true when it commits something to step out. */
    def take(env: Envelope[RawMessage]): Boolean = {
      val from = position
      val ack = env.clock != 0 && env.flags == Flags.AckTxn
      val prior = if (ack) sequencer.state(journal, env.producer) else None
      position = env.end
      def commitFrom(): Unit = {
        committing = env; stepped = null
        ackedFrom = if (ack) from else -1L
        acking = prior
      }
      sequencer.queue(env) match {
        case QueueOutcome.AckCommitReplay =>
          val (_, begin, end) = sequencer.replayRange
          replayedBytes += end - begin
          sequencer.startReplay(ReadUncommitted(replay(begin, end), OnMalformed.forReplay(onMalformed)))
          commitFrom()
          true
        case o if o.commits =>
          commitFrom()
          true
        case QueueOutcome.OutsideAlreadyAcked | QueueOutcome.ContinueAlreadyAcked |
            QueueOutcome.ContinueTxnClockLarger =>
          duplicates += 1
          false
        case _ => false
      }
    }

    /** Whether `env` is the message that commits the commit being stepped. */
    def commits(env: Envelope[RawMessage]): Boolean =
      committing != null && env.begin == committing.begin && env.end == committing.end

    /** The commit is stepped out whole: its replay, if any, is done. */
    def settle(): Unit = {
      committing = null; ackedFrom = -1L; acking = None; stepped = null
      replays.foreach(closeQuietly)
      replays.clear()
    }

    /** Where the journal stands, and its producers' states there. */
    def reached: (JournalPosition, Seq[ProducerState]) = {
      val (at, producers) =
        if (!options.readCommitted) (position, Nil)
        else if (committing == null || ackedFrom < 0) (position, states())
        else {
          // Before the ACK; and when part of the commit is out, the next batch reads the ACK
          // again and takes only what follows.
          val p = committing.producer
          val state =
            if (stepped == null) acking
            else {
              val at = Sequencer.nextSequenceClock(sequencer.sequenceClock(journal, p), stepped.clock)
              Some(ProducerState(journal, p, stepped.clock, stepped.end,
                  if (at > stepped.clock) at else Long.MinValue))
            }
          (ackedFrom, (states().filterNot(_.producer == p) ++ state).sortBy(_.producer.value))
        }
      (JournalPosition(at, range.revision, range.origin), producers)
    }

    def stop(): Unit = {
      val f = feed_
      if (f != null) f.interrupt()
      val r = reader
      if (r != null) closeQuietly(r)
      replays.foreach(closeQuietly)
    }

    private def states(): Seq[ProducerState] = {
      snapshots += 1
      sequencer.checkpoint(options.producerPruneHorizon.toNanos, bySequenceClock = true)._2
    }

    private def messages(bytes: Iterator[JournalBytes]): MessageIterator = decoder.messages(bytes)

    // What a commit needs from before the ring, read again; a Read that ends short of it (a
    // lagging replica) is opened again until the client's retry timeout.
    private def replay(begin: Long, end: Long): MessageIterator = messages(new Iterator[JournalBytes] {
      private var expected = begin
      private var r = open(begin)
      private val backoff = new Backoff(config.client.retryTimeout)

      private def open(at: Long): JournalReader = {
        val reader = client.read(journal, at, end)
        replays += reader
        reader
      }

      override def hasNext: Boolean = {
        while (expected < end && !r.hasNext) {
          if (!backoff.pause()) throw GazetteErrors.readCutShort(journal, expected, begin, end)
          closeQuietly(r)
          replays -= r
          r = open(expected)
        }
        expected < end && r.hasNext
      }

      override def next(): JournalBytes = {
        val c = r.next()
        if (c.offset > expected) lost(expected, c.offset, "replayed")
        expected = c.end
        backoff.reset()
        JournalBytes(c.offset, c.content.asReadOnlyByteBuffer())
      }
    })

    private def lost(from: Long, to: Long, what: String): Unit = {
      val why = s"bytes [$from, $to) were removed before they were $what"
      if (options.failOnDataLoss) throw GazetteErrors.dataLoss(journal, why)
      log.warn(s"journal $journal: $why; skipping them (failOnDataLoss=false)")
      lostBytes.addAndGet(to - from)
    }

    // The feed: messages as they are appended, from where the batch starts, until the task ends.
    // A Read the broker ends is opened again after the last whole message.
    private def read(): Unit = {
      var at = start.resume
      try {
        while (!closed) {
          val r = client.read(journal, at, 0L, block = true)
          reader = r
          var expected = at
          val bytes = r.map { c =>
            if (c.offset > expected) {
              lost(expected, c.offset, "read")
              throw Jumped(c.offset)
            }
            expected = c.end
            bytesRead.addAndGet(c.content.size().toLong)
            JournalBytes(c.offset, c.content.asReadOnlyByteBuffer())
          }
          try {
            val it = messages(bytes)
            while (!closed && it.hasNext) {
              val m = it.next()
              at = m.fold(_.end, _.end)
              val event = Read(index, m)
              budget.acquire(weight(event))
              events.put(event)
              pollMs = 0L
            }
            if (!closed) Thread.sleep(ReopenMs)
          } catch {
            case Jumped(to) => at = to
            // Suspended (brokers suspend idle journals), the journal has no replica to read: nothing
            // is lost, and the append that resumes it is read once a Read is served again.
            case e: BrokerStatusException if e.status == Status.SUSPENDED =>
              if (pollMs == 0) log.info(s"journal $journal: suspended at offset $at; reading it again once resumed")
              pollMs = math.min(math.max(2 * pollMs, SuspendedPollMs), MaxSuspendedPollMs)
              Thread.sleep(pollMs)
          } finally closeQuietly(r)
        }
      } catch {
        case _: InterruptedException =>
        case e: BrokerStatusException if e.status == Status.JOURNAL_NOT_FOUND && !closed =>
          try deleted(at, Option(reader).fold(-1L)(_.writeHead))
          catch { case e: Throwable => events.put(Failed(e)) }
        case e: Throwable => if (!closed) events.put(Failed(e))
      }
    }

    // As micro-batches treat a journal that vanished: data loss, or no longer read (the next
    // batch drops it), counting what it held past `at` as far as its last write head said.
    private def deleted(at: Long, head: Long): Unit = {
      val what = s"it was deleted while a real-time batch read it, at offset $at"
      if (options.failOnDataLoss) throw GazetteErrors.dataLoss(journal, what)
      log.warn(s"journal $journal: $what; it is no longer read (failOnDataLoss=false)")
      lostBytes.addAndGet(math.max(0L, head - at))
    }
  }

  private def closeQuietly(r: JournalReader): Unit =
    try r.close()
    catch { case _: Exception => }
}

private[source] object RealTimeJournalReader {
  private val log = LoggerFactory.getLogger(classOf[RealTimeJournalReader])

  // Messages read ahead of the task, across its journals.
  private val QueueCapacity = 4096
  // Bytes of messages read ahead of the task (see readAheadBytes).
  private val ReadAheadBytes = 4L << 20
  // A pause before a Read the broker ended is opened again.
  private val ReopenMs = 50L
  // How often a Read of a suspended journal is tried again: each second at first, then less often
  // while it stays suspended (a task may hold many idle journals).
  private val SuspendedPollMs = 1000L
  private val MaxSuspendedPollMs = 8000L

  // What the feeds hand the task: a message read from its `index`th journal, or why a feed failed.
  private sealed trait Event
  private final case class Read(index: Int, message: Either[MalformedMessage, Envelope[RawMessage]]) extends Event
  private final case class Failed(error: Throwable) extends Event

  private final case class Jumped(to: Long) extends RuntimeException(null, null, false, false)

  /** How many bytes of messages a task reads ahead of its rows, across its journals: 4 MiB, or
    * `sequencerRingBytes` where that is smaller (a message larger than this is read alone).
    */
  def readAheadBytes(options: SourceOptions): Long = math.min(ReadAheadBytes, options.sequencerRingBytes)

  private def weight(e: Event): Long = e match {
    case Read(_, Right(env)) => env.message.bytes.length.toLong
    case _ => 0L
  }
}
