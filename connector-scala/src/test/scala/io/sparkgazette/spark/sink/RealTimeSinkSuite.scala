package io.sparkgazette.spark
package sink

import java.nio.file.Files

import io.sparkgazette.message.{Flags, ProducerId, Uuid}
import io.sparkgazette.spark.sink.realtime.{OriginUuids, RealTimeBatches}
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/** The pure parts of real-time writes: UUIDs from origins, and batches recorded as they start. */
class RealTimeSinkSuite extends AnyFunSuite {
  private def origin(producer: Long, clock: Long) = Uuid.build(ProducerId(producer), clock, Flags.ContinueTxn)

  test("a row's UUID follows from its origin alone, and rows from one message take a producer each") {
    val (a, b) = (new OriginUuids(7L), new OriginUuids(7L))
    val first = Seq(("j1", origin(1, 100)), ("j1", origin(1, 100)), ("j2", origin(1, 100)), ("j1", origin(1, 200)))
      .map { case (j, o) => a.next(j, o).toOption.flatten.get }
    // A run again of the same input: the same UUIDs, whatever ran before.
    b.next("j9", origin(5, 5))
    assert(first == Seq(("j1", origin(1, 100)), ("j1", origin(1, 100)), ("j2", origin(1, 100)), ("j1", origin(1, 200)))
      .map { case (j, o) => b.next(j, o).toOption.flatten.get })
    assert(first.map(Uuid.flags).toSet == Set(Flags.OutsideTxn))
    assert(first.map(Uuid.clock) == Seq(100L, 100L, 100L, 200L))
    // k = 0 and 1 of one message differ; so do the same producer's messages in two journals.
    assert(first.map(Uuid.producer).distinct.size == 3)
    assert(Uuid.producer(first(0)) == Uuid.producer(first(3)))
    // Another query's seed, other producers.
    assert(Uuid.producer(new OriginUuids(8L).next("j1", origin(1, 100)).toOption.flatten.get) !=
      Uuid.producer(first(0)))
  }

  test("a row from an earlier message of its origin's producer than one already written is refused") {
    val u = new OriginUuids(1L)
    assert(u.next("j", origin(1, 200)).exists(_.isDefined))
    assert(u.next("j", origin(2, 100)).exists(_.isDefined))
    assert(u.next("j", origin(1, 100)) == Right(None))
    assert(u.next("other", origin(1, 100)).exists(_.isDefined))
    // An origin without a clock is read at least once: it gives no UUID of its own.
    assert(u.next("j", origin(1, 0)) == Left(()))
  }

  test("a real-time batch run again maps rows over the journals and seed recorded when it first started") {
    val checkpoint = Files.createTempDirectory("gazette-rt-batches").toString
    val conf = new Configuration()
    val listed = SinkTargets(IndexedSeq("a", "b"), Map("a" -> "", "b" -> ""), "rendezvous")
    val (seed, first) = new RealTimeBatches(Some(checkpoint), conf).start(5, listed)
    val grown = listed.copy(journals = IndexedSeq("a", "b", "c"), contentTypes = listed.contentTypes + ("c" -> ""))
    val (again, replayed) = new RealTimeBatches(Some(checkpoint), conf).start(5, grown)
    assert(again == seed && replayed.journals == first.journals && replayed.contentTypes.contains("c"))
    val (next, later) = new RealTimeBatches(Some(checkpoint), conf).start(6, grown)
    assert(next == seed && later.journals == IndexedSeq("a", "b", "c"))
    // Without a checkpoint nothing is recorded, and each batch has a seed of its own.
    assert(new RealTimeBatches(None, conf).start(5, listed)._1 != new RealTimeBatches(None, conf).start(5, listed)._1)
  }
}
