package io.sparkgazette.spark
package sink
package intents

import io.sparkgazette.message.ProducerId
import org.scalatest.funsuite.AnyFunSuite

class SinkProducersSuite extends AnyFunSuite {
  private val p = SinkProducers(seed = 7L, lastAcks = Map.empty)

  test("a first attempt's producer per partition and epoch parity, the same across epochs; other attempts' used once") {
    val ids = for (part <- 0 until 16; stage <- 0 until 2; attempt <- 0 until 3; epoch <- 0L until 4L)
      yield p.producer(part, stage, attempt, epoch)
    assert(ids.distinct.size == 16 * 2 + 16 * 5 * 4)
    assert(p.producer(3, 0, 0, 10L) == p.producer(3, 0, 0, 1000L))
    assert(p.producer(3, 0, 0, 10L) != p.producer(3, 0, 0, 11L))
    assert(p.producer(3, 0, 1, 10L) != p.producer(3, 0, 1, 12L) && p.producer(3, 1, 0, 10L) != p.producer(3, 1, 0, 12L))
    assert(ids.forall(id => (id.value >>> 40 & 1) == 1 && id.value >>> 48 == 0)) // multicast, 48 bits
    assert(SinkProducers(8L, Map.empty).producer(3, 0, 0, 10L) != p.producer(3, 0, 0, 10L))
  }

  test("clocks continue above every recorded ACK; rollbacks go to the last one in the journal, or to 1") {
    val a = p.producer(0, 0, 0, 0L)
    val b = p.producer(1, 0, 0, 0L)
    val q = p.after(Seq((a, "j1", 500L), (a, "j2", 700L), (b, "j1", 900L)))
    assert(q.clockFloor(a) == 700L && q.clockFloor(b) == 900L && q.clockFloor(ProducerId(1L)) == 0L)
    assert(q.rollbackClock(a, "j1") == 500L && q.rollbackClock(a, "j3") == 1L)
    assert(q.after(Seq((a, "j1", 800L))).rollbackClock(a, "j1") == 800L)
    assert(q.after(Seq((a, "j1", 100L))).rollbackClock(a, "j1") == 500L) // never backwards
  }

  test("a partition committed by a later attempt moves to new producers; so does a new run, keeping nothing") {
    val q = p.copy(run = "run-1").after(Seq((p.producer(3, 0, 1, 4L), "j1", 500L)), retried = Seq(3))
    assert(q.producer(3, 0, 0, 6L) != p.producer(3, 0, 0, 6L)) // the first attempt's producer of epoch 4's parity
    assert(q.producer(3, 0, 1, 6L) != p.producer(3, 0, 1, 6L)) // and the attempt that committed
    assert(q.producer(4, 0, 0, 6L) == p.producer(4, 0, 0, 6L)) // other partitions keep theirs
    assert(q.after(Nil, retried = Seq(3)).producer(3, 0, 0, 6L) != q.producer(3, 0, 0, 6L))
    assert(q.forRun("run-1") == q)
    val next = q.forRun("run-2")
    assert(next.run == "run-2" && next.lastAcks.isEmpty && next.generations.isEmpty && next.seed != q.seed)
  }

  test("no producer under which an attempt did not commit is handed out again, in its run or a later one") {
    // Such an attempt may have left messages open, or have appends on their way: its producer's
    // next ACK would commit them (which is why a task appends no rollback ahead of its rows).
    val seed = System.nanoTime()
    val rnd = new scala.util.Random(seed)
    val partitions = 8
    var producers = SinkProducers.fresh("run-0")
    var runs = 0
    var retries = 0
    val spent = scala.collection.mutable.Set[ProducerId]()
    for (epoch <- 0L until 400L) {
      // Each partition's attempts (stage attempt, attempt), the one that commits last: its first
      // alone; a retry after it failed, or two; a speculative copy that wins, or loses; a stage
      // retry's; or, now and then, the epoch fails whole and the query runs again.
      val attempts = (0 until partitions).map(_ ->
          (rnd.nextInt(8) match {
            case 0 => Seq((0, 0), (0, 1))
            case 1 => Seq((0, 0), (0, 1), (0, 2))
            case 2 => Seq((0, 1), (0, 0))
            case 3 => Seq((0, 0), (1, 0))
            case _ => Seq((0, 0))
          }))
      val handed = for ((part, tries) <- attempts; (s, a) <- tries) yield producers.producer(part, s, a, epoch)
      withClue(s"seed $seed, epoch $epoch: ") {
        assert(handed.filter(spent).isEmpty, "a producer under which an attempt did not commit is used again")
        assert(handed.distinct.size == handed.size, "two attempts of the epoch share a producer")
      }
      if (rnd.nextInt(25) == 0) {
        spent ++= handed
        runs += 1
        producers = producers.forRun(s"run-$runs")
      } else {
        val committers = attempts.map { case (part, tries) => part -> tries.last }
        spent ++= (for ((part, tries) <- attempts; (s, a) <- tries.init) yield producers.producer(part, s, a, epoch))
        val acks = committers.map { case (part, (s, a)) => (producers.producer(part, s, a, epoch), "j", epoch + 1) }
        val retried = committers.collect { case (part, (s, a)) if !SinkProducers.isFirst(s, a) => part }
        retries += retried.size
        producers = producers.after(acks, retried)
      }
    }
    assert(runs > 0 && retries > 0)
  }
}
