package io.sparkgazette.message

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}

import scala.collection.mutable
import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/** A journal's range sequenced in pieces, each from the states the pieces before it transfer
  * the range's starting states to, against one Sequencer reading it all: random histories of a
  * few producers with duplicates, rollbacks (ACKs at and below the last one), OUTSIDE_TXN
  * messages abandoning open transactions, clocks going back, unknown flags and messages without
  * a UUID, split at random offsets.
  *
  * `SPARKGAZETTE_SEED` and `SPARKGAZETTE_ROUNDS` in the environment choose the histories; a
  * failure names its seed and round.
  */
class StateTransferSuite extends AnyFunSuite {
  private val J = "a/journal"
  private val seed = sys.env.get("SPARKGAZETTE_SEED").map(_.toLong).getOrElse(20261126L)
  private val rounds = sys.env.get("SPARKGAZETTE_ROUNDS").map(_.toInt).getOrElse(3000)

  /** A history: envelopes back to back, 10 bytes each, the message's name its payload. */
  private def history(rnd: Random, n: Int): IndexedSeq[Envelope[String]] = {
    val producers = (1 to 1 + rnd.nextInt(4)).map(i => ProducerId(0x10L * i))
    val clocks = mutable.Map[ProducerId, Long]().withDefault(_ => 1L + rnd.nextInt(5))
    val acked = mutable.Map[ProducerId, Long]().withDefaultValue(0L)
    val written = mutable.Map[ProducerId, Vector[(Long, Int)]]().withDefaultValue(Vector.empty)
    // Small clock steps and frequent re-sends, so that clocks collide, go back and repeat.
    (0 until n).map { i =>
      val p = producers(rnd.nextInt(producers.size))
      val tick = () => { val c = clocks(p) + 1 + rnd.nextInt(3); clocks(p) = c; c }
      val (clock, flags) = rnd.nextInt(100) match {
        case r if r < 40 => (tick(), Flags.ContinueTxn)
        case r if r < 55 => val c = tick(); acked(p) = c; (c, Flags.AckTxn)
        case r if r < 65 => (tick(), Flags.OutsideTxn)
        case r if r < 75 && written(p).nonEmpty => written(p)(rnd.nextInt(written(p).size)) // a duplicate
        case r if r < 80 => (acked(p), Flags.AckTxn) // a rollback at the last ACK
        case r if r < 83 => (math.max(1L, acked(p) - 1 - rnd.nextInt(6)), Flags.AckTxn) // an older checkpoint
        case r if r < 88 => // clocks reused from below
          val c = math.max(1L, clocks(p) - rnd.nextInt(8));
          (c, Seq(Flags.ContinueTxn, Flags.OutsideTxn)(rnd.nextInt(2)))
        case r if r < 91 => (tick(), Seq(0x3, 0x100)(rnd.nextInt(2))) // flags Gazette reads as OUTSIDE_TXN
        case r if r < 94 => (0L, Flags.OutsideTxn) // no UUID
        case _ => (tick(), Flags.ContinueTxn)
      }
      written(p) :+= ((clock, flags))
      // A message without a UUID has the zero one: no producer.
      val producer = if (clock == 0) ProducerId(0) else p
      Envelope(J, i * 10L, i * 10L + 10, producer, clock, flags, s"${producer.value.toHexString}/$clock/$flags@$i")
    }
  }

  /** Queues `env` and steps out everything it commits, replaying from `log`. */
  private def feed(seq: Sequencer[String], log: IndexedSeq[Envelope[String]], env: Envelope[String]): Seq[String] = {
    if (seq.queue(env) == QueueOutcome.AckCommitReplay) {
      val (_, b, e) = seq.replayRange
      seq.startReplay(log.iterator.filter(m => m.begin >= b && m.end <= e))
    }
    Iterator.continually(seq.step()).takeWhile(_.isDefined).flatten.map(_.message).toList
  }

  private def states(seq: Sequencer[_]): Seq[ProducerState] = seq.checkpoint(0)._2

  // Sequence clocks are for real-time batches, whose offsets carry them; the pieces of a
  // micro-batch's range, and their state files, keep none.
  private def sorted(s: Seq[ProducerState]): Seq[ProducerState] =
    s.map(_.copy(sequenceClock = Long.MinValue)).sortBy(_.producer.value)

  private def roundTrip(t: StateTransfer): StateTransfer = {
    val bytes = new ByteArrayOutputStream()
    val out = new ObjectOutputStream(bytes)
    out.writeObject(t)
    out.close()
    new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray)).readObject().asInstanceOf[StateTransfer]
  }

  test("pieces sequenced from their composed states hold the states and emit what one sequencer does") {
    var straddling, rolledBackAcross, duplicatesAcross = 0L
    for (round <- 0 until rounds) {
      val rnd = new Random(seed + round)
      val log = history(rnd, 5 + rnd.nextInt(120))
      // The range begins somewhere in the history (its states are those the history left there) and
      // is cut at random message boundaries into pieces.
      val start = rnd.nextInt(log.size)
      val cuts = (Seq(start) ++ Seq.fill(rnd.nextInt(5))(start + rnd.nextInt(log.size - start + 1)) :+ log.size)
        .distinct.sorted
      val ring = Seq(1, 2, 4, 8192)(rnd.nextInt(4))
      val horizon = Seq(0L, 100L * 4, 100L * 40)(rnd.nextInt(3)) // nanos: 64 and 640 clock units
      def context = s"seed ${seed + round} (SPARKGAZETTE_SEED=${seed + round} SPARKGAZETTE_ROUNDS=1), cuts $cuts, " +
        s"ring $ring:\n${log.map(_.message).mkString(" ")}"

      // One sequencer over it all: the states at every cut, and what each piece's messages commit.
      val whole = new Sequencer[String](ringSize = ring)
      log.take(start).foreach(feed(whole, log, _))
      val truth = mutable.Buffer(states(whole))
      val emitted = cuts.zip(cuts.tail).map { case (a, b) =>
        val out = log.slice(a, b).flatMap(feed(whole, log, _))
        truth += states(whole)
        out
      }.toVector
      val finalStates = whole.checkpoint(horizon)._2

      // The pieces: each one's transfer, composed from the range's states.
      val transfers = cuts.zip(cuts.tail).map { case (a, b) => roundTrip(StateTransfer.of(log.slice(a, b).iterator)) }
        .toVector
      var composed = truth.head
      var prefix = new StateTransfer()
      for (i <- transfers.indices) {
        withClue(s"piece $i from ${cuts(i)}, $context\n") {
          assert(sorted(composed) == sorted(truth(i)))
          assert(sorted(prefix.apply(J, truth.head)) == sorted(truth(i)), s"prefix $prefix")
          straddling += composed.count(_.begin != -1)
          val seq = new Sequencer[String](states = composed, ringSize = Seq(1, 3, 8192)(rnd.nextInt(3)))
          val got = log.slice(cuts(i), cuts(i + 1)).flatMap(feed(seq, log, _))
          assert(got == emitted(i))
          if (i == transfers.size - 1) assert(sorted(seq.checkpoint(horizon)._2) == sorted(finalStates))
          else assert(sorted(states(seq)) == sorted(truth(i + 1)))
          // Messages of the piece that roll back or repeat what an earlier piece holds.
          val open = composed.filter(_.begin != -1).map(_.producer).toSet
          val lastAcks = composed.map(s => s.producer -> s.lastAck).toMap
          log.slice(cuts(i), cuts(i + 1)).foreach { m =>
            if (m.flags == Flags.AckTxn && lastAcks.get(m.producer).exists(m.clock <= _) && open(m.producer))
              rolledBackAcross += 1
            if (m.clock != 0 && lastAcks.get(m.producer).exists(m.clock <= _) && m.flags != Flags.AckTxn)
              duplicatesAcross += 1
          }
        }
        composed = transfers(i).apply(J, composed)
        prefix = prefix.andThen(transfers(i))
      }
    }
    info(s"$rounds histories from seed $seed: $straddling transactions open at a cut, $rolledBackAcross rolled " +
      s"back across one, $duplicatesAcross duplicates of messages before one")
    assert(straddling > rounds && rolledBackAcross > 0 && duplicatesAcross > 0)
  }

  test("a piece's transfer gives the states one sequencer reaches from any states at its start") {
    for (round <- 0 until rounds) {
      val rnd = new Random(seed + 7919 * round)
      val log = history(rnd, 1 + rnd.nextInt(60))
      val producers = log.map(_.producer).distinct
      // Any states: each producer absent, or at any clock, with a transaction open or not.
      val incoming = producers.filter(_ => rnd.nextInt(4) > 0).map { p =>
        ProducerState(J, p, rnd.nextInt(40).toLong, if (rnd.nextBoolean()) -1L else 10L * rnd.nextInt(log.size))
      }
      val seq = new Sequencer[String](states = incoming, ringSize = 8192)
      log.foreach { env =>
        if (seq.queue(env) == QueueOutcome.AckCommitReplay) seq.startReplay(Iterator.empty)
        while (seq.step().isDefined) {}
      }
      val t = StateTransfer.of(log.iterator)
      withClue(s"seed $seed round $round, from $incoming, transfer $t:\n${log.map(_.message).mkString(" ")}\n") {
        assert(sorted(t.apply(J, incoming)) == sorted(states(seq)))
        assert(t.size <= producers.size + log.size)
      }
    }
  }

  test(
    "a run of OUTSIDE_TXN messages is kept as its largest clock, a transaction as the CONTINUE_TXN messages that can open it") {
    val p = ProducerId(1)
    val t = new StateTransfer()
    (1L to 100L).foreach(c => t.add(p, c, Flags.OutsideTxn, c * 10))
    assert(t.size == 2)
    (101L to 200L).foreach(c => t.add(p, c, Flags.ContinueTxn, c * 10))
    (150L to 160L).foreach(c => t.add(p, c, Flags.ContinueTxn, c * 10)) // duplicates
    assert(t.size == 1 + 1 + 100)
    t.add(p, 201, Flags.AckTxn, 2010)
    assert(t.size == 1)
    (202L to 300L).foreach(c => t.add(p, c, Flags.ContinueTxn, c * 10))
    assert(t.size == 1)
    assert(t.apply(J, Nil) == Seq(ProducerState(J, p, 201, 2020)))
  }
}
