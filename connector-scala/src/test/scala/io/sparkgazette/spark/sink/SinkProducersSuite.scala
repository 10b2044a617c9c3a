package io.sparkgazette.spark
package sink

import io.sparkgazette.message.ProducerId
import io.sparkgazette.spark.sink.intents.SinkProducers
import org.scalatest.funsuite.AnyFunSuite

class SinkProducersSuite extends AnyFunSuite {
  private val p = SinkProducers(seed = 7L, lastAcks = Map.empty)

  test("one producer per partition, stage attempt, task attempt and epoch parity; the same across epochs") {
    val ids = for (part <- 0 until 16; stage <- 0 until 2; attempt <- 0 until 3; epoch <- 0L until 2L)
      yield p.producer(part, stage, attempt, epoch)
    assert(ids.distinct.size == ids.size)
    assert(p.producer(3, 0, 0, 10L) == p.producer(3, 0, 0, 1000L))
    assert(p.producer(3, 0, 0, 10L) != p.producer(3, 0, 0, 11L))
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
}
