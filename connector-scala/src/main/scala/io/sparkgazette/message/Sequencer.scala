package io.sparkgazette.message

import scala.collection.mutable
import scala.jdk.CollectionConverters._

/** Turns messages read uncommitted into the committed sequence, exactly as Gazette's Sequencer:
  * duplicates are dropped, CONTINUE_TXN messages are held until an ACK_TXN with a larger or
  * equal clock commits them (or an older one rolls them back), OUTSIDE_TXN messages commit at
  * once, and one producer's open transaction never blocks another's commit.
  *
  * Use: [[queue]] each message read; when the outcome commits, call [[step]] until it returns
  * None, passing [[replayRange]]'s messages to [[startReplay]] first if the outcome was
  * [[QueueOutcome.AckCommitReplay]]. The ACK message itself is the last one stepped out;
  * readers that hand messages to users drop it.
  *
  * Held messages live in a ring of at most `ringSize` entries weighing at most `ringBytes` in
  * all (by `weigh`). A transaction longer than the ring is committed by replaying
  * `[begin, first entry still in the ring)` from the journal, so memory stays bounded whatever
  * the transaction's length.
  *
  * @param offsets journal -> offset read through, as of the producer `states`
  */
final class Sequencer[M](
    offsets: Map[String, Long] = Map.empty,
    states: Seq[ProducerState] = Nil,
    ringSize: Int = 8192,
    ringBytes: Long = Long.MaxValue,
    weigh: M => Long = (_: M) => 0L
) {
  import QueueOutcome._
  import Sequencer._

  private val size = math.max(1, ringSize)
  private val ring = new Array[Envelope[M]](size)
  // Each entry's weight and the sequence it was held for, so that evicting it needs neither
  // `weigh` nor a lookup: this runs for every message once the ring is full.
  private val weights = new Array[Long](size)
  private val owners = new Array[Partial](size)
  private val nextIndex = { val a = new Array[Int](size); java.util.Arrays.fill(a, -1); a }
  private var head = 0
  private var count = 0
  private var bytes = 0L

  private val readThrough = mutable.Map[String, Long]() ++= offsets
  // By journal, then producer: one journal's state may hold a million producers.
  private val partials = mutable.HashMap[String, mutable.LongMap[Partial]]()
  // The sequences of `partials` with a transaction open that began since the last checkpoint, by
  // identity: this changes at every transaction, and a (journal, producer) key would be built,
  // boxed and hashed each time.
  private val pending = new java.util.HashSet[Partial]()

  private var emit: Partial = _
  private var dequeued: Envelope[M] = _
  // The largest clock among the CONTINUE messages the commit being stepped has walked, emitted or
  // rolled back. A message at or below it was a duplicate when it was written (Gazette's
  // ContinueTxnClockLarger): dropped as it is queued when its sequence is in the ring, it is met
  // again in a replay, or in a sequence restored from a checkpoint, which keeps no clock past
  // the last ACK (and so would take an old message re-sent into an open transaction, then
  // commit it at an older ACK that rolls the rest back).
  private var walked = Long.MinValue
  private var replay: Iterator[Envelope[M]] = _
  private var replayNeeded = false
  private var replayUntil = 0L

  private var discardedCount = 0L

  /** Messages discarded as rolled back so far: held messages of a transaction an older ACK
    * rolled back or an OUTSIDE_TXN message abandoned, and messages beyond an ACK's clock.
    */
  def discarded: Long = discardedCount

  states.foreach { s =>
    val p = new Partial(s.journal, s.producer, s.lastAck, s.lastAck, s.begin)
    p.sequenceClock = math.max(s.lastAck, s.sequenceClock)
    partials.getOrElseUpdate(s.journal, new mutable.LongMap[Partial](states.size))(s.producer.value) = p
  }

  /** Classifies the next message read from a journal. Not allowed while a commit is being stepped. */
  def queue(env: Envelope[M]): QueueOutcome = {
    if (emit != null) throw new IllegalStateException("queue() called before step() finished the previous commit")
    val weight = weigh(env.message)
    makeRoom(weight)

    val zero = env.clock == 0
    val p =
      if (zero) new Partial(env.journal, env.producer, 0, 0, -1)
      else partialsOf(env.journal).getOrElseUpdate(
        env.producer.value, new Partial(env.journal, env.producer, env.clock - 1, env.clock - 1, -1))
    val flags = if (zero) Flags.OutsideTxn else env.flags

    val outcome = flags match {
      case Flags.ContinueTxn =>
        if (env.clock <= p.minClock) ContinueAlreadyAcked
        else if (env.clock <= p.maxClock) ContinueTxnClockLarger
        else if (p.begin == -1) ContinueBeginSpan
        else ContinueExtendSpan
      case Flags.AckTxn =>
        if (env.clock <= p.minClock) AckRollback
        else if (p.begin == -1) AckEmpty
        else if (p.ringStart == -1 || ring(p.ringStart).begin != p.begin) AckCommitReplay
        else AckCommitRing
      // Unknown flag combinations are treated as OUTSIDE_TXN, as Gazette does.
      case _ =>
        if (!zero && env.clock <= p.minClock) OutsideAlreadyAcked else OutsideCommit
    }

    outcome match {
      case OutsideAlreadyAcked | ContinueAlreadyAcked | ContinueTxnClockLarger =>
        readThrough(env.journal) = env.end
      case ContinueBeginSpan | ContinueExtendSpan =>
        if (outcome == ContinueBeginSpan) {
          p.begin = env.begin
          pending.add(p)
        }
        append(p, env, weight)
        p.maxClock = env.clock
        readThrough(env.journal) = env.end
      case AckRollback =>
        discardedCount += held(p)
        p.minClock = env.clock
        p.maxClock = env.clock
        p.begin = -1
        p.ringStart = -1
        p.ringStop = -1
        pending.remove(p)
        readThrough(env.journal) = env.end
      case _ => // A commit: the read-through offset moves only once stepping completes.
        if (outcome == AckEmpty || outcome == OutsideCommit) {
          p.begin = env.begin
          if (outcome == OutsideCommit) { discardedCount += held(p); p.ringStart = -1; p.ringStop = -1 }
        }
        append(p, env, weight)
        p.maxClock = env.clock
        emit = p
        walked = Long.MinValue
        dequeued = null.asInstanceOf[Envelope[M]]
        replayNeeded = outcome == AckCommitReplay
        replayUntil = if (replayNeeded) ring(p.ringStart).begin else 0L
    }
    outcome
  }

  /** The journal range `[begin, end)` whose messages [[startReplay]] must be given. */
  def replayRange: (String, Long, Long) = {
    if (emit == null || !replayNeeded) throw new IllegalStateException("no replay is required")
    (emit.journal, emit.begin, replayUntil)
  }

  /** Supplies the messages of [[replayRange]], read uncommitted. */
  def startReplay(messages: Iterator[Envelope[M]]): Unit = {
    if (emit == null || !replayNeeded) throw new IllegalStateException("no replay is required")
    replay = messages
    replayNeeded = false
  }

  /** The next committed message of the commit being stepped, or None when it is complete. */
  def step(): Option[Envelope[M]] = {
    if (emit == null) return None
    if (replayNeeded) throw new IllegalStateException("startReplay() must be called before step()")
    // The message stepped out last is processed: a checkpoint from now on is past it.
    if (dequeued != null) {
      emit.minClock = dequeued.clock
      emit.sequenceClock = Sequencer.nextSequenceClock(emit.sequenceClock, dequeued.clock)
    }

    while (replay != null && replay.hasNext) {
      val env = replay.next()
      if (env.journal != emit.journal)
        throw new ReplayException(s"replay of wrong journal ${env.journal}, wanted ${emit.journal}")
      if (env.begin < emit.begin || env.end > replayUntil)
        throw new ReplayException(
          s"replay has wrong Begin/End [${env.begin}, ${env.end}) for range [${emit.begin}, $replayUntil) of ${emit.journal}")
      if (env.producer == emit.producer && take(env)) return Some(env)
    }
    replay = null

    while (emit.ringStart != -1) {
      val i = emit.ringStart
      emit.ringStart = if (i == emit.ringStop) -1 else nextIndex(i)
      val env = ring(i)
      // Nothing reads a committed entry again: letting it go now keeps a ring of large messages
      // from living through collections (its slot still counts until evicted, so what the ring
      // holds, and what is replayed, does not change).
      ring(i) = null.asInstanceOf[Envelope[M]]
      if (take(env)) return Some(env)
    }

    // The commit is complete: the producer's state moves past it.
    val last = if (dequeued != null) dequeued else null.asInstanceOf[Envelope[M]]
    if (last != null) {
      readThrough(emit.journal) = last.end
      emit.minClock = last.clock
      emit.maxClock = last.clock
    }
    emit.begin = -1
    emit.ringStart = -1
    emit.ringStop = -1
    pending.remove(emit)
    emit = null
    dequeued = null.asInstanceOf[Envelope[M]]
    None
  }

  /** Whether any producer has an open transaction that began since the last [[checkpoint]]. */
  def hasPending: Boolean = !pending.isEmpty

  /** The (journal, producer) of each transaction counted by [[hasPending]]. */
  def pendingProducers: Set[(String, ProducerId)] = pending.asScala.iterator.map(p => (p.journal, p.producer)).toSet

  /** The (journal, producer) of every open transaction, those the states it was restored with
    * hold included (which [[pendingProducers]] leaves out).
    */
  def openProducers: Set[(String, ProducerId)] =
    partials.iterator.flatMap { case (j, ps) => ps.valuesIterator.filter(_.begin != -1).map(p => (j, p.producer)) }
      .toSet

  /** Whether `producer`'s transaction in `journal` is open. */
  def isOpen(journal: String, producer: ProducerId): Boolean =
    partials.get(journal).flatMap(_.get(producer.value)).exists(_.begin != -1)

  /** One producer's state, as [[checkpoint]] would give it (None: unknown), without pruning. */
  def state(journal: String, producer: ProducerId): Option[ProducerState] =
    partials.get(journal).flatMap(_.get(producer.value)).map(_.state)

  /** The sequence clock of `producer`'s last committed message in `journal` processed (stepped
    * out, then stepped past; Long.MinValue: none). A committed message's sequence clock is its
    * clock, or one above its predecessor's where that is not above it (see
    * [[Sequencer.nextSequenceClock]]): it grows with every message a producer commits, where
    * their clocks go back after a rollback to an older ACK (an upstream producer restored an
    * older checkpoint, and its messages committed since are committed again, or for the first
    * time, at clocks below those committed before). It is kept in the producer's state, so that
    * a reader restored from a checkpoint continues it.
    */
  def sequenceClock(journal: String, producer: ProducerId): Long =
    partials.get(journal).flatMap(_.get(producer.value)).fold(Long.MinValue)(_.sequenceClock)

  /** Offsets read through and the states of producers to keep; producers whose newest clock is
    * older than their journal's newest acknowledged clock minus `pruneHorizonNanos` are dropped,
    * unless their transaction is open: its ACK may still come, and would find nothing to commit.
    * (Gazette prunes those too, but restores state only when a shard restarts; a reader that
    * restores at every batch sees a restored producer's newest clock as its last ACK, and would
    * prune a producer that commits once a day while its transaction is open.) With
    * `bySequenceClock`, a producer's newest clock is the larger of its newest and its sequence
    * clock: a rollback to an ACK older than the horizon then keeps the sequence clock of what it
    * committed before (a reader whose states carry sequence clocks, everywhere, asks for this).
    */
  def checkpoint(pruneHorizonNanos: Long, bySequenceClock: Boolean = false): (Map[String, Long], Seq[ProducerState]) = {
    val horizon = if (pruneHorizonNanos > 0) Clock.ofNanos(pruneHorizonNanos) else 0L
    val states = mutable.ArrayBuffer[ProducerState]()
    for (journal <- partials.keys.toSeq.sorted) {
      val ps = partials(journal)
      val bound = if (ps.isEmpty || horizon == 0) Long.MinValue else ps.valuesIterator.map(_.minClock).max - horizon
      val producers = ps.keys.toArray
      java.util.Arrays.sort(producers)
      producers.foreach { id =>
        val p = ps(id)
        val newest = if (bySequenceClock) math.max(p.maxClock, p.sequenceClock) else p.maxClock
        if (p.begin != -1 || newest >= bound) states += p.state
        else ps.remove(id)
      }
    }
    pending.clear()
    (readThrough.toMap, states.toSeq)
  }

  private def partialsOf(journal: String): mutable.LongMap[Partial] =
    partials.getOrElseUpdate(journal, mutable.LongMap.empty)

  private def take(env: Envelope[M]): Boolean = {
    val continues = env.flags == Flags.ContinueTxn
    val duplicate = env.clock != 0 && (env.clock <= emit.minClock || continues && env.clock <= walked)
    if (continues && env.clock > walked) walked = env.clock
    val rolledBack = env.clock > emit.maxClock
    if (rolledBack && !duplicate) discardedCount += 1
    if (duplicate || rolledBack) false
    else {
      emit.begin = env.begin
      dequeued = env
      true
    }
  }

  // The partial's messages still in the ring.
  private def held(p: Partial): Int = {
    var n = 0
    var i = p.ringStart
    while (i != -1) { n += 1; i = if (i == p.ringStop) -1 else nextIndex(i) }
    n
  }

  private def append(p: Partial, env: Envelope[M], weight: Long): Unit = {
    ring(head) = env
    weights(head) = weight
    owners(head) = p
    nextIndex(head) = -1
    if (p.ringStart == -1) p.ringStart = head else nextIndex(p.ringStop) = head
    p.ringStop = head
    head = (head + 1) % size
    count += 1
    bytes += weight
  }

  // Evicts the oldest entries until a message of `weight` fits: the ring's oldest entry is the
  // one at `head` when it is full, as in Gazette, and an older one when bytes run out first.
  private def makeRoom(weight: Long): Unit =
    while (count == size || (count > 0 && bytes + weight > ringBytes)) {
      val oldest = Math.floorMod(head - count, size)
      val p = owners(oldest)
      ring(oldest) = null.asInstanceOf[Envelope[M]]
      owners(oldest) = null
      count -= 1
      bytes -= weights(oldest)
      if (p.ringStart == oldest) {
        if (p.ringStop == oldest) { p.ringStart = -1; p.ringStop = -1 }
        else p.ringStart = nextIndex(oldest)
      }
    }
}

object Sequencer {

  /** The sequence clock of a committed message at `clock` after one at `previous`. */
  def nextSequenceClock(previous: Long, clock: Long): Long = if (clock > previous) clock else previous + 1

  /** The sequence of one (journal, producer): clocks in (minClock, maxClock] are held. */
  private final class Partial(
      val journal: String,
      val producer: ProducerId,
      var minClock: Long,
      var maxClock: Long,
      var begin: Long
  ) {
    var ringStart: Int = -1
    var ringStop: Int = -1
    var sequenceClock: Long = minClock

    def state: ProducerState =
      ProducerState(journal, producer, minClock, begin, if (sequenceClock > minClock) sequenceClock else Long.MinValue)
  }
}

/** Replayed messages that do not belong to the requested range. */
final class ReplayException(message: String) extends IllegalStateException(message)
