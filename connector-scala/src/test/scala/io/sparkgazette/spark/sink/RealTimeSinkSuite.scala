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
  private val none: Long => Long = _ => Long.MinValue

  test("a row's UUID follows from its origin alone, and rows from one message take a producer each") {
    val (a, b) = (new OriginUuids(7L), new OriginUuids(7L))
    val first = Seq(("j1", origin(1, 100)), ("j1", origin(1, 100)), ("j2", origin(1, 100)), ("j1", origin(1, 200)))
      .map { case (j, o) => a.next(j, o, "", none).get }
    // A run again of the same input: the same UUIDs, whatever ran before.
    b.next("j9", origin(5, 5), "", none)
    assert(first == Seq(("j1", origin(1, 100)), ("j1", origin(1, 100)), ("j2", origin(1, 100)), ("j1", origin(1, 200)))
      .map { case (j, o) => b.next(j, o, "", none).get })
    assert(first.map(Uuid.flags).toSet == Set(Flags.OutsideTxn))
    assert(first.map(Uuid.clock) == Seq(100L, 100L, 100L, 200L))
    // k = 0 and 1 of one message differ; so do the same producer's messages in two journals.
    assert(first.map(Uuid.producer).distinct.size == 3)
    assert(Uuid.producer(first(0)) == Uuid.producer(first(3)))
    // Another query's seed, other producers.
    assert(Uuid.producer(new OriginUuids(8L).next("j1", origin(1, 100), "", none).get) !=
      Uuid.producer(first(0)))
  }

  test("rows of messages whose clocks went back (after a rollback to an older ACK) take clocks above the last") {
    val u = new OriginUuids(1L)
    def clocks(j: String, os: (Long, Long)*) = os.map { case (p, c) =>
      Uuid.clock(u.next(j, origin(p, c), "", none).get)
    }
    assert(clocks("j", 1L -> 200L, 2L -> 100L) == Seq(200L, 100L))
    // Producer 1 goes back to 100, then 150 (both at or below 201), then ahead again; each row of
    // one message (k = 0, 1) keeps its message's clock, each under a producer of its own.
    assert(clocks("j", 1L -> 100L, 1L -> 100L, 1L -> 150L, 1L -> 300L) == Seq(201L, 201L, 202L, 300L))
    // A re-committed message (its UUID again, just after itself) gives rows under further producers.
    val again = Seq(u.next("j", origin(1, 300), "", none).get, u.next("j", origin(1, 300), "", none).get)
    assert(again.map(Uuid.clock) == Seq(300L, 300L) && again.map(Uuid.producer).distinct.size == 2)
    // Other journals and producers are their own.
    assert(clocks("other", 1L -> 100L) == Seq(100L))
    // An origin without a clock is read at least once: it gives no UUID of its own.
    assert(u.next("j", origin(1, 0), "", none).isEmpty)
  }

  test("a task takes up each producer's clocks where the source's sequence clock stood when it began") {
    val u = new OriginUuids(1L)
    val start: Long => Long = p => if (p == 1L) 500L else Long.MinValue
    assert(Uuid.clock(u.next("j", origin(1, 400), "", start).get) == 501L)
    assert(Uuid.clock(u.next("j", origin(1, 600), "", start).get) == 600L)
    assert(Uuid.clock(u.next("j", origin(2, 400), "", start).get) == 400L)
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
