package io.sparkgazette.message

import scala.collection.mutable
import scala.util.Random

import io.sparkgazette.message.QueueOutcome._
import org.scalatest.funsuite.AnyFunSuite

/** Gazette's sequencer scenarios (`message/sequencer_test.go`), re-expressed: each message is a
  * letter (producer) and a clock; the journal log gives replays their bytes.
  */
class SequencerSuite extends AnyFunSuite {
  private val A = ProducerId(0xaaL)
  private val B = ProducerId(0xbbL)
  private val C = ProducerId(0xccL)
  private val J = "a/journal"

  /** An in-memory journal: envelopes laid out back to back, 10 bytes each. */
  private final class Log {
    val all = mutable.ArrayBuffer[Envelope[String]]()
    def write(p: ProducerId, clock: Long, flags: Int, name: String): Envelope[String] = {
      val begin = all.lastOption.map(_.end).getOrElse(0L)
      val env = Envelope(J, begin, begin + 10, p, clock, flags, name)
      all += env
      env
    }
    def range(begin: Long, end: Long): Iterator[Envelope[String]] =
      all.iterator.filter(e => e.begin >= begin && e.end <= end)
  }

  /** Queues `env` and steps out everything it commits, replaying from `log` when needed. */
  private def feed(seq: Sequencer[String], log: Log, env: Envelope[String]): (QueueOutcome, Seq[String]) = {
    val outcome = seq.queue(env)
    if (outcome == AckCommitReplay) {
      val (_, b, e) = seq.replayRange
      seq.startReplay(log.range(b, e))
    }
    (outcome, Iterator.continually(seq.step()).takeWhile(_.isDefined).flatten.map(_.message).toList)
  }

  private def cont = Flags.ContinueTxn
  private def ack = Flags.AckTxn
  private def out = Flags.OutsideTxn

  test("(a) duplicates inside a sequence are served once from the ring") {
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 3)
    val results = Seq(log.write(A, 1, cont, "a1"), log.write(A, 2, cont, "a2"), log.write(A, 1, cont, "a1Dup"),
      log.write(A, 2, cont, "a2Dup"), log.write(A, 3, ack, "a3ACK")).map(feed(seq, log, _))
    assert(results.map(_._1) == Seq(ContinueBeginSpan, ContinueExtendSpan, ContinueTxnClockLarger,
      ContinueTxnClockLarger, AckCommitRing))
    assert(results.last._2 == Seq("a1", "a2", "a3ACK"))
  }

  test("(b) an ACK with nothing open emits only itself; (c) a partial ACK drops later clocks") {
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 3)
    assert(feed(seq, log, log.write(A, 4, ack, "a4ACK")) == (AckEmpty, Seq("a4ACK")))
    feed(seq, log, log.write(A, 5, cont, "a5"))
    feed(seq, log, log.write(A, 7, cont, "a7"))
    assert(feed(seq, log, log.write(A, 6, ack, "a6ACK")) == (AckCommitRing, Seq("a5", "a6ACK")))
    // a7 was rolled back by a6ACK: a later ACK does not resurrect it.
    assert(feed(seq, log, log.write(A, 8, ack, "a8ACK"))._2 == Seq("a8ACK"))
  }

  test("(d) an ACK at the last acknowledged clock rolls back, while another producer stays open") {
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 3)
    feed(seq, log, log.write(A, 1, ack, "a1ACK"))
    feed(seq, log, log.write(A, 2, cont, "a2"))
    feed(seq, log, log.write(B, 1, cont, "b1"))
    assert(feed(seq, log, log.write(A, 1, ack, "a1ACKAgain")) == (AckRollback, Nil))
    assert(seq.hasPending)
    assert(feed(seq, log, log.write(B, 2, ack, "b2ACK"))._2 == Seq("b1", "b2ACK"))
    assert(feed(seq, log, log.write(A, 3, ack, "a3ACK"))._2 == Seq("a3ACK"))
  }

  test(
    "ring add and evict: evicting a producer's first entries moves its replay range; offsets follow every CONTINUE") {
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 5)
    Seq(log.write(A, 1, cont, "a1"), log.write(B, 1, cont, "b1"), log.write(A, 2, cont, "a2"),
      log.write(B, 2, cont, "b2"), log.write(A, 3, cont, "a3")).foreach { e =>
      seq.queue(e)
      assert(seq.checkpoint(0)._1(J) == e.end)
    }
    // The ring is full: b3 evicts a1, b4 evicts b1 and the ACK itself evicts a2, so only a3 is left.
    seq.queue(log.write(B, 3, cont, "b3"))
    seq.queue(log.write(B, 4, cont, "b4"))
    assert(seq.queue(log.write(A, 4, ack, "a4ACK")) == AckCommitReplay)
    assert(seq.replayRange == ((J, log.all(0).begin, log.all(4).begin)))
    seq.startReplay(log.range(log.all(0).begin, log.all(4).begin))
    assert(Iterator.continually(seq.step()).takeWhile(_.isDefined).flatten.map(_.message).toList == Seq("a1", "a2",
      "a3",
      "a4ACK"))
    // Once all of a producer's entries are evicted, its range ends at the ACK, the ring's only entry.
    Seq("c1", "c2", "c3", "c4", "c5").zipWithIndex.foreach { case (n, i) => seq.queue(log.write(C, i + 1L, cont, n)) }
    assert(seq.queue(log.write(B, 5, ack, "b5ACK")) == AckCommitReplay)
    assert(seq.replayRange == ((J, log.all(1).begin, log.all.last.begin)))
  }

  test("(f) a replay holding duplicates from before and within the sequence emits each message once") {
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 3)
    feed(seq, log, log.write(A, 1, ack, "a1ACK"))
    assert(feed(seq, log, log.write(A, 2, cont, "a2"))._1 == ContinueBeginSpan)
    assert(feed(seq, log, log.write(A, 1, cont, "a1Dup"))._1 == ContinueAlreadyAcked)
    assert(feed(seq, log, log.write(A, 3, cont, "a3"))._1 == ContinueExtendSpan)
    assert(feed(seq, log, log.write(A, 2, cont, "a2Dup"))._1 == ContinueTxnClockLarger)
    feed(seq, log, log.write(B, 1, cont, "b1"))
    feed(seq, log, log.write(B, 2, cont, "b2"))
    feed(seq, log, log.write(A, 3, cont, "a3Dup"))
    assert(feed(seq, log, log.write(A, 4, ack, "a4ACK")) == (AckCommitReplay, Seq("a2", "a3", "a4ACK")))
  }

  test("(g) a partial rollback: every ring entry is beyond the ACK's clock") {
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 3)
    feed(seq, log, log.write(A, 1, ack, "a1ACK"))
    feed(seq, log, log.write(A, 3, cont, "a3"))
    feed(seq, log, log.write(A, 4, cont, "a4"))
    assert(feed(seq, log, log.write(A, 2, ack, "a2ACK")) == (AckCommitRing, Seq("a2ACK")))
    assert(feed(seq, log, log.write(A, 5, ack, "a5ACK"))._2 == Seq("a5ACK"))
  }

  test("(e, h) transactions evicted from the ring are replayed, each its own range, skipping other producers") {
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 3)
    feed(seq, log, log.write(A, 1, cont, "a1"))
    feed(seq, log, log.write(B, 1, cont, "b1"))
    feed(seq, log, log.write(A, 2, cont, "a2"))
    feed(seq, log, log.write(B, 2, cont, "b2"))
    feed(seq, log, log.write(B, 3, cont, "b3"))
    val (outcome, emitted) = feed(seq, log, log.write(A, 3, ack, "a3ACK"))
    assert(outcome == AckCommitReplay)
    assert(emitted == Seq("a1", "a2", "a3ACK"))
    assert(feed(seq, log, log.write(B, 4, ack, "b4ACK")) == (AckCommitReplay, Seq("b1", "b2", "b3", "b4ACK")))
  }

  test("(i) an ACK below the last acknowledged clock resets the producer, whose clocks are then reused") {
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 3)
    feed(seq, log, log.write(A, 5, ack, "a5ACK"))
    assert(feed(seq, log, log.write(A, 2, ack, "a2ACK")) == (AckRollback, Nil))
    assert(feed(seq, log, log.write(A, 3, cont, "a3"))._1 == ContinueBeginSpan)
    assert(feed(seq, log, log.write(A, 4, ack, "a4ACK")) == (AckCommitRing, Seq("a3", "a4ACK")))
  }

  test("without a ring buffer every commit replays, and other producers stay pending") {
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 0)
    feed(seq, log, log.write(A, 1, cont, "a1"))
    feed(seq, log, log.write(B, 1, cont, "b1"))
    feed(seq, log, log.write(A, 2, cont, "a2"))
    assert(feed(seq, log, log.write(A, 3, ack, "a3ACK")) == (AckCommitReplay, Seq("a1", "a2", "a3ACK")))
    assert(seq.hasPending)
  }

  test("OUTSIDE_TXN commits at once, drops duplicates, discards an open sequence; zero UUIDs always pass") {
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 3)
    assert(feed(seq, log, log.write(A, 1, out, "a1")) == (OutsideCommit, Seq("a1")))
    assert(feed(seq, log, log.write(A, 1, out, "a1Dup")) == (OutsideAlreadyAcked, Nil))
    feed(seq, log, log.write(A, 2, cont, "a2"))
    assert(feed(seq, log, log.write(A, 3, out, "a3")) == (OutsideCommit, Seq("a3")))
    assert(feed(seq, log, log.write(A, 4, 0x100, "a4Odd")) == (OutsideCommit, Seq("a4Odd")))
    assert(feed(seq, log, log.write(A, 4, 0x100, "a4OddDup")) == (OutsideAlreadyAcked, Nil))
    assert(feed(seq, log, log.write(ProducerId(0), 0, cont, "z1"))._2 == Seq("z1"))
    assert(feed(seq, log, log.write(ProducerId(0), 0, cont, "z1Again"))._2 == Seq("z1Again"))
    val (offsets, states) = seq.checkpoint(0)
    assert(offsets(J) == log.all.last.end)
    assert(!states.exists(_.producer == ProducerId(0)))
  }

  test("a message without a clock does not close the open transaction of a producer with the same id") {
    // A message without a UUID has producer 0 and clock 0: it is outside every sequence, even of
    // a producer whose id is 0, whose transaction stays open (and pending, for a batch's look-ahead).
    val Zero = ProducerId(0L)
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 10)
    assert(feed(seq, log, log.write(Zero, 16, cont, "z1")) == (ContinueBeginSpan, Nil))
    assert(feed(seq, log, log.write(Zero, 0, out, "plain")) == (OutsideCommit, Seq("plain")))
    assert(seq.hasPending && seq.pendingProducers == Set((J, Zero)))
    assert(feed(seq, log, log.write(Zero, 32, ack, "ack"))._2 == Seq("z1", "ack"))
    assert(!seq.hasPending)
  }

  test("producer states round-trip: checkpoint clears pending, and a restored sequencer emits the same") {
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 10)
    feed(seq, log, log.write(A, 1, cont, "a1"))
    feed(seq, log, log.write(B, 1, cont, "b1"))
    feed(seq, log, log.write(C, 1, out, "c1"))
    assert(seq.hasPending)
    val (offsets, states) = seq.checkpoint(0)
    assert(!seq.hasPending)
    assert(states == Seq(
      ProducerState(J, A, 0, 0), ProducerState(J, B, 0, 10), ProducerState(J, C, 1, -1)))

    val restored = new Sequencer[String](offsets, states, ringSize = 10)
    val more = Seq(log.write(A, 2, cont, "a2"), log.write(A, 3, ack, "a3ACK"), log.write(B, 2, ack, "b2ACK"))
    val original = more.map(feed(seq, log, _))
    val again = more.map(feed(restored, log, _))
    assert(original.map(_._2) == again.map(_._2))
    // The restored producer A has an open begin, so a2 extends it; both commits replay.
    assert(again.map(_._1) == Seq(ContinueExtendSpan, AckCommitReplay, AckCommitReplay))
    assert(again.map(_._2) == Seq(Nil, Seq("a1", "a2", "a3ACK"), Seq("b1", "b2ACK")))
  }

  test(
    "an old message re-sent into an open sequence after a restore is a duplicate, as in the uninterrupted sequencer") {
    // A re-sent message whose clock lies between the last ACK and the open sequence's newest clock,
    // then an ACK between the two: Gazette's sequencer drops the re-send (ContinueTxnClockLarger)
    // and the ACK rolls the sequence back. A restored sequencer must know the sequence's newest
    // clock to do the same.
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 12)
    Seq(log.write(A, 10, out, "a10"), log.write(A, 40, cont, "a40")).foreach(feed(seq, log, _))
    val (offsets, states) = seq.checkpoint(0)
    val restored = new Sequencer[String](offsets, states, 12)
    val rest = Seq(log.write(A, 20, cont, "a20Resent"), log.write(A, 30, ack, "a30ACK"))
    val original = rest.map(feed(seq, log, _))
    assert(original.map(_._1) == Seq(ContinueTxnClockLarger, AckCommitRing))
    assert(original.flatMap(_._2) == Seq("a30ACK"))
    assert(rest.map(feed(restored, log, _)).flatMap(_._2) == Seq("a30ACK"))
  }

  test("a checkpoint taken mid-dequeue excludes the ACK and is tightened to the messages consumed") {
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 12)
    Seq(
      log.write(
        A, 1, cont, "a1"), log.write(A, 2, cont, "a2"), log.write(A, 3, ack, "a3ACK")).foreach(feed(seq, log, _))
    val a4 = log.write(A, 4, cont, "a4"); val a5 = log.write(A, 5, cont, "a5");
    val a6ACK = log.write(A, 6, ack, "a6ACK")
    seq.queue(a4); seq.queue(a5)
    assert(seq.queue(a6ACK) == AckCommitRing)
    assert(seq.step().map(_.message) == Some("a4"))
    assert(seq.step().map(_.message) == Some("a5")) // consumed a4; crash before a5 is processed
    val (offsets, states) = seq.checkpoint(0)
    val twice = new Sequencer[String](offsets, states, 12).checkpoint(0)
    assert(twice == ((offsets, states)))
    assert(offsets == Map(J -> a5.end))
    assert(states == Seq(ProducerState(J, A, 4, a5.begin)))
    val restored = new Sequencer[String](offsets, states, 12)
    assert(restored.queue(a6ACK) == AckCommitReplay)
    assert(restored.replayRange == ((J, a5.begin, a6ACK.begin)))
    restored.startReplay(log.range(a5.begin, a6ACK.begin))
    assert(Iterator.continually(restored.step()).takeWhile(_.isDefined).flatten.map(_.message).toList == Seq("a5",
      "a6ACK"))
  }

  test("duplicates straddling a checkpoint extend the restored span, yet each message is emitted once") {
    val log = new Log; val seq1: Sequencer[String] = new Sequencer[String](ringSize = 12)
    Seq(
      log.write(A, 1, cont, "a1"), log.write(A, 2, cont, "a2"), log.write(A, 3, cont, "a3")).foreach(feed(seq1, log, _))
    val (offsets, states) = seq1.checkpoint(0)
    val seq2 = new Sequencer[String](offsets, states, 12)
    val rest = Seq(log.write(A, 1, cont, "a1Dup"), log.write(A, 2, cont, "a2Dup"), log.write(A, 3, cont, "a3Dup"),
      log.write(A, 4, ack, "a4ACK"))
    val first = rest.map(feed(seq1, log, _))
    val second = rest.map(feed(seq2, log, _))
    assert(
      first.map(_._1) == Seq(ContinueTxnClockLarger, ContinueTxnClockLarger, ContinueTxnClockLarger, AckCommitRing))
    assert(second.map(_._1) == Seq(ContinueExtendSpan, ContinueExtendSpan, ContinueExtendSpan, AckCommitReplay))
    assert(first.last._2 == Seq("a1", "a2", "a3", "a4ACK"))
    assert(second.last._2 == Seq("a1", "a2", "a3", "a4ACK"))
  }

  test("producers older than the horizon are pruned at checkpoint") {
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String]()
    val hour = Clock.ofNanos(3600L * 1000000000L)
    feed(seq, log, log.write(A, 10 * hour, ack, "old"))
    feed(seq, log, log.write(B, 12 * hour, ack, "new"))
    feed(seq, log, log.write(C, 11 * hour + 1, ack, "middle"))
    val (_, kept) = seq.checkpoint(3600L * 1000000000L)
    assert(kept.map(_.producer) == Seq(B, C))
    val (_, all) = new Sequencer[String](states = Seq(ProducerState(J, A, 10 * hour, -1))).checkpoint(0)
    assert(all.size == 1)
  }

  test("a producer rolled back to an ACK older than the horizon keeps its sequence clock where states carry it") {
    val hour = Clock.ofNanos(3600L * 1000000000L)
    def rolledBack(): Sequencer[String] = {
      val log = new Log; val seq: Sequencer[String] = new Sequencer[String]()
      feed(seq, log, log.write(A, 10 * hour, ack, "a-old-ack"))
      feed(seq, log, log.write(A, 12 * hour, ack, "a-new-ack"))
      feed(seq, log, log.write(B, 12 * hour, ack, "b"))
      // A's first ACK again: its last ACK is now two hours behind B's, what it committed is not.
      assert(feed(seq, log, log.write(A, 10 * hour, ack, "a-rollback"))._1 == AckRollback)
      seq
    }
    // Gazette prunes on the newest clock, which the rollback lowered; so do micro-batches' states.
    assert(!rolledBack().checkpoint(3600L * 1000000000L)._2.exists(_.producer == A))
    val (_, kept) = rolledBack().checkpoint(3600L * 1000000000L, bySequenceClock = true)
    assert(kept.find(_.producer == A).map(s => (s.lastAck, s.sequenceClock)) == Some((10 * hour, 12 * hour)))
    assert(new Sequencer[String](states = kept).sequenceClock(J, A) == 12 * hour)
  }

  test("a producer with an open transaction is kept however old, also once restored at every checkpoint") {
    val log = new Log
    val hour = Clock.ofNanos(3600L * 1000000000L)
    var seq = new Sequencer[String]()
    feed(seq, log, log.write(A, 10 * hour, ack, "a0"))
    feed(seq, log, log.write(B, 12 * hour, ack, "b0"))
    feed(seq, log, log.write(A, 12 * hour, cont, "a1"))
    var (_, states) = seq.checkpoint(3600L * 1000000000L)
    seq = new Sequencer[String](states = states)
    feed(seq, log, log.write(B, 13 * hour, ack, "b1"))
    states = seq.checkpoint(3600L * 1000000000L)._2
    assert(states.map(_.producer) == Seq(A, B))
    seq = new Sequencer[String](states = states)
    assert(seq.queue(log.write(A, 13 * hour, ack, "a2ACK")) == AckCommitReplay)
  }

  test("replayed messages outside the range, or of another journal, are errors") {
    val log = new Log; val seq: Sequencer[String] = new Sequencer[String](ringSize = 1)
    feed(seq, log, log.write(A, 1, cont, "a1"))
    feed(seq, log, log.write(B, 1, cont, "b1"))
    assert(seq.queue(log.write(A, 2, ack, "a2ACK")) == AckCommitReplay)
    intercept[IllegalStateException](seq.step())
    seq.startReplay(Iterator(log.all(0).copy(journal = "other")))
    intercept[ReplayException](seq.step())
  }

  test("checkpoint and restore after any message yields exactly the uninterrupted output") {
    val rnd = new Random(7)
    for (_ <- 0 until 200) {
      val log = script(rnd)
      val whole = run(new Sequencer[String](ringSize = 4), log, log.all.toSeq)
      for (cut <- 0 to log.all.size) {
        val first: Sequencer[String] = new Sequencer[String](ringSize = 4)
        val before = run(first, log, log.all.take(cut).toSeq)
        val (offsets, states) = first.checkpoint(0)
        val resumeAt = offsets.getOrElse(J, 0L)
        val after =
          run(new Sequencer[String](offsets, states, ringSize = 4), log, log.all.filter(_.begin >= resumeAt).toSeq)
        assert(before ++ after == whole, s"cut at $cut of ${log.all.map(_.message)}")
      }
    }
  }

  test("sequence clocks grow with every commit, through rollbacks to older ACKs and restores") {
    val rnd = new Random(11)
    var wentBack = 0
    for (_ <- 0 until 200) {
      val log = script(rnd)
      val whole = sequenced(new Sequencer[String](ringSize = 4), log, log.all.toSeq)
      whole.groupBy(_._1).foreach { case (p, commits) =>
        val clocks = commits.map(_._3)
        assert(clocks.zip(clocks.drop(1)).forall { case (a, b) => a < b }, s"$p: $commits of ${log.all.map(_.message)}")
        assert(commits.forall { case (_, clock, sequenced) => sequenced >= clock })
      }
      wentBack += whole.count { case (_, clock, sequenced) => sequenced > clock }
      for (cut <- 0 to log.all.size) {
        val first: Sequencer[String] = new Sequencer[String](ringSize = 4)
        val before = sequenced(first, log, log.all.take(cut).toSeq)
        val (offsets, states) = first.checkpoint(0)
        val resumeAt = offsets.getOrElse(J, 0L)
        val after = sequenced(new Sequencer[String](offsets, states, ringSize = 4), log,
          log.all.filter(_.begin >= resumeAt).toSeq)
        assert(before ++ after == whole, s"cut at $cut of ${log.all.map(_.message)}")
      }
    }
    assert(wentBack > 0, "no committed message's clock went back")
  }

  test("a byte-bounded ring evicts its oldest entries and replays, emitting exactly what an unbounded one does") {
    val rnd = new Random(11)
    for (_ <- 0 until 200) {
      val log = script(rnd)
      val unbounded = run(new Sequencer[String](), log, log.all.toSeq)
      val byBytes = new Sequencer[String](ringBytes = 3 * 12L, weigh = (m: String) => m.length.toLong)
      assert(run(byBytes, log, log.all.toSeq) == unbounded, s"script ${log.all.map(_.message)}")
    }
  }

  private def run(seq: Sequencer[String], log: Log, envs: Seq[Envelope[String]]): Seq[String] =
    envs.flatMap(e => feed(seq, log, e)._2)

  /** Each commit: its producer, its last message's clock and the producer's sequence clock after it. */
  private def sequenced(seq: Sequencer[String], log: Log,
      envs: Seq[Envelope[String]]): Seq[(ProducerId, Long, Long)] = {
    val out = mutable.ArrayBuffer[(ProducerId, Long, Long)]()
    envs.foreach { e =>
      val (_, emitted) = feed(seq, log, e)
      if (emitted.nonEmpty && e.clock != 0) out += ((e.producer, e.clock, seq.sequenceClock(J, e.producer)))
    }
    out.toSeq
  }

  /** Random interleavings of three producers' transactions, with re-sends and rollbacks. */
  private def script(rnd: Random): Log = {
    val log = new Log
    val clocks = mutable.Map(A -> 0L, B -> 0L, C -> 0L)
    val lastAck = mutable.Map(A -> 0L, B -> 0L, C -> 0L)
    for (i <- 0 until 6 + rnd.nextInt(14)) {
      val p = Seq(A, B, C)(rnd.nextInt(3))
      rnd.nextInt(10) match {
        case 0 | 1 | 2 | 3 => clocks(p) += 1; log.write(p, clocks(p), cont, s"$p-${clocks(p)}-$i")
        case 4 | 5 => clocks(p) += 1; lastAck(p) = clocks(p); log.write(p, clocks(p), ack, s"$p-ack${clocks(p)}-$i")
        case 6 => clocks(p) += 1; log.write(p, clocks(p), out, s"$p-out${clocks(p)}-$i")
        case 7 => // a re-sent ACK: the last one, or an older one (a producer restored an older checkpoint)
          val acks = log.all.filter(e => e.producer == p && e.flags == ack)
          if (acks.nonEmpty) {
            val clock = if (rnd.nextBoolean()) lastAck(p) else acks(rnd.nextInt(acks.size)).clock
            log.write(p, clock, ack, s"$p-rollback$clock-$i")
          }
        case _ => // a duplicate of an earlier message of p: its last, or any
          val sent = log.all.filter(_.producer == p)
          (if (rnd.nextBoolean()) sent.lastOption else sent.lift(rnd.nextInt(sent.size.max(1))))
            .foreach(e => log.write(p, e.clock, e.flags, s"${e.message}-dup$i"))
      }
    }
    log
  }
}
