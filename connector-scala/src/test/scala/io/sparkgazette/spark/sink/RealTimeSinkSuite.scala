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
  private val asIs: (String, Long, Long) => Long = (_, _, clock) => clock

  test("a row's UUID follows from its origin alone, and rows from one message take a producer each") {
    val (a, b) = (new OriginUuids(7L), new OriginUuids(7L))
    val origins = Seq(("j1", origin(1, 100)), ("j1", origin(1, 100)), ("j2", origin(1, 100)), ("j1", origin(1, 200)))
    val first = origins.map { case (j, o) => a.next(j, o, "", asIs).toOption.get }
    // A run again of the same input: the same UUIDs, whatever ran before.
    b.next("j9", origin(5, 5), "", asIs)
    assert(first == origins.map { case (j, o) => b.next(j, o, "", asIs).toOption.get })
    assert(first.map(Uuid.flags).toSet == Set(Flags.OutsideTxn))
    assert(first.map(Uuid.clock) == Seq(100L, 100L, 100L, 200L))
    // k = 0 and 1 of one message differ; so do the same producer's messages in two journals.
    assert(first.map(Uuid.producer).distinct.size == 3)
    assert(Uuid.producer(first(0)) == Uuid.producer(first(3)))
    // Another query's seed, other producers.
    assert(Uuid.producer(new OriginUuids(8L).next("j1", origin(1, 100), "", asIs).toOption.get) !=
      Uuid.producer(first(0)))
  }

  test("a row's clock is its origin's sequence clock; a message committed again right after itself is another") {
    val u = new OriginUuids(1L)
    // Producer 1 went back to an older ACK: its next messages, at clocks 100 and 100 again (a
    // message committed twice), have sequence clocks 201 and 202.
    def row(clock: Long, seq: Long) = u.next("j", origin(1, clock), "", (_, _, _) => seq).toOption.get
    val rows = Seq(row(200, 200), row(100, 201), row(100, 201), row(100, 202))
    assert(rows.map(Uuid.clock) == Seq(200L, 201L, 201L, 202L))
    // k: the second row of the message at 201 takes the next producer; the message at 202 starts again.
    assert(rows.map(Uuid.producer) == Seq(0, 0, 1, 0).map(k => OriginUuids.producer(1L, "", "j", 1L, k)))
    // Without a clock, or not among the messages the source emitted lately: no UUID from the origin.
    assert(u.next("j", origin(1, 0), "", asIs) == Left(OriginUuids.NoClock))
    assert(u.next("j", origin(1, 300), "", (_, _, _) => Long.MinValue) == Left(OriginUuids.NotFound))
  }

  test("a task's writer finds each row's sequence clock among the messages its source emitted last") {
    val s = new SequencedMessages(capacity = 4)
    assert(s.find("j", 1L, 10L) == Long.MinValue)
    s.add("j", 1L, 10L, 10L); s.add("k", 1L, 10L, 11L); s.add("j", 1L, 10L, 12L)
    // The newest message of that journal, producer and clock.
    assert(s.find("j", 1L, 10L) == 12L && s.find("k", 1L, 10L) == 11L && s.find("j", 2L, 10L) == Long.MinValue)
    (1 to 4).foreach(i => s.add("j", 2L, i.toLong, i.toLong))
    // Older than the last `capacity`: forgotten.
    assert(s.find("j", 1L, 10L) == Long.MinValue && s.find("j", 2L, 1L) == 1L)
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
