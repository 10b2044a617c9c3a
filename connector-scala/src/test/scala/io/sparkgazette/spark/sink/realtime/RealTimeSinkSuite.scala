package io.sparkgazette.spark
package sink
package realtime

import java.nio.file.Files
import java.util.concurrent.{CountDownLatch, TimeUnit}

import io.sparkgazette.message.{Flags, ProducerId, Uuid}
import io.sparkgazette.spark.handoff.SequencedMessages
import io.sparkgazette.spark.sink.config.SinkTargets
import io.sparkgazette.testing.Interrupts
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/** The pure parts of real-time writes: UUIDs from origins, and batches recorded as they start. */
class RealTimeSinkSuite extends AnyFunSuite {
  private def origin(producer: Long, clock: Long) = Uuid.build(ProducerId(producer), clock, Flags.ContinueTxn)

  /** Each (journal, producer, clock, sequence clock, rows) emitted, its rows written before the next. */
  private def inStep(u: OriginUuids, messages: (String, Long, Long, Long, Int)*): Seq[java.util.UUID] = {
    val emitted = new SequencedMessages()
    messages.flatMap { case (j, p, c, s, rows) =>
      emitted.add(j, p, c, s)
      (0 until rows).map(_ => u.next(j, origin(p, c), "", emitted).toOption.get)
    }
  }

  test("a row's UUID follows from its origin alone, and rows from one message take a producer each") {
    val messages = Seq(("j1", 1L, 100L, 100L, 2), ("j2", 1L, 100L, 100L, 1), ("j1", 1L, 200L, 200L, 1))
    val first = inStep(new OriginUuids(7L), messages: _*)
    // A run again of the same input: the same UUIDs.
    assert(first == inStep(new OriginUuids(7L), messages: _*))
    assert(first.map(Uuid.flags).toSet == Set(Flags.OutsideTxn))
    assert(first.map(Uuid.clock) == Seq(100L, 100L, 100L, 200L))
    // k = 0 and 1 of one message differ; so do the same producer's messages in two journals.
    assert(first.map(Uuid.producer).distinct.size == 3)
    assert(Uuid.producer(first(0)) == Uuid.producer(first(3)))
    // Another query's seed, other producers.
    assert(Uuid.producer(inStep(new OriginUuids(8L), messages: _*).head) != Uuid.producer(first(0)))
  }

  test("a row's clock is its origin's sequence clock; a message committed again right after itself is another") {
    // In step, whatever came between: the copy emitted since the last row's message.
    val between = inStep(new OriginUuids(1L), ("j", 1L, 100L, 100L, 1), ("j", 2L, 5L, 5L, 1), ("j", 1L, 100L, 101L, 1))
    assert(between.map(Uuid.clock) == Seq(100L, 5L, 101L))
    // Producer 1 went back to an older ACK: its messages at clocks 100 and 100 again (committed
    // twice) have sequence clocks 201 and 202.
    val rows = inStep(new OriginUuids(1L), ("j", 1L, 200L, 200L, 1), ("j", 1L, 100L, 201L, 2), ("j", 1L, 100L, 202L, 1))
    assert(rows.map(Uuid.clock) == Seq(200L, 201L, 201L, 202L))
    assert(rows.map(Uuid.producer) == Seq(0, 0, 1, 0).map(k => OriginUuids.producer(1L, "", "j", 1L, k)))
  }

  test("rows held back take their messages in order; rows not told apart or not found get no UUID from them") {
    val emitted = new SequencedMessages(capacity = 8)
    Seq((1L, 100L, 100L), (2L, 50L, 50L), (1L, 90L, 101L), (1L, 100L, 102L), (4L, 7L, 7L)).foreach {
      case (p, c, s) => emitted.add("j", p, c, s)
    }
    val u = new OriginUuids(1L)
    def clockOf(p: Long, c: Long) = u.next("j", origin(p, c), "", emitted).map(Uuid.clock)
    // The source read on: the rows come after all five messages, in order, two filtered out.
    assert(Seq(clockOf(1, 100), clockOf(1, 90), clockOf(1, 100)) == Seq(Right(100L), Right(101L), Right(102L)))
    // Producer 1 at 100 once more: another row of the last row's message, or of this one?
    emitted.add("j", 1L, 100L, 103L)
    assert(clockOf(1, 100) == Left(OriginUuids.Ambiguous))
    // A message no longer held: not found; the rows after it are.
    (1 to 9).foreach(i => emitted.add("j", 3L, i.toLong, i.toLong))
    assert(clockOf(3, 1) == Left(OriginUuids.NotFound))
    assert((2 to 9).map(i => clockOf(3, i.toLong)) == (2 to 9).map(i => Right(i.toLong)))
    // Held back, the first row's UUID also the newest message's: the rows still take their own.
    val again = new SequencedMessages()
    Seq((100L, 100L), (90L, 101L), (100L, 102L)).foreach { case (c, s) => again.add("j", 1L, c, s) }
    val v = new OriginUuids(1L)
    assert(Seq(100L, 90L, 100L).map(c => v.next("j", origin(1, c), "", again).map(Uuid.clock)) ==
      Seq(Right(100L), Right(101L), Right(102L)))
    // Without a clock: none.
    assert(u.next("j", origin(1, 0), "", emitted) == Left(OriginUuids.NoClock))
    // One producer's messages at one clock in two journals, the rows held back past both: each
    // row's message is the one of its own journal, which no copy elsewhere makes ambiguous.
    val twoJournals = new SequencedMessages()
    Seq("j1", "j2").foreach(twoJournals.add(_, 1L, 100L, 100L))
    val w = new OriginUuids(1L)
    assert(Seq("j1", "j2").map(j => w.next(j, origin(1, 100), "", twoJournals).map(Uuid.producer)) ==
      Seq("j1", "j2").map(j => Right(OriginUuids.producer(1L, "", j, 1L, 0))))
  }

  /** What Gazette's read-committed readers keep of `uuids` (OUTSIDE_TXN each, None for a row
    * written under a producer of the writer's own): the indices of those dropped, each at or below
    * its producer's last clock.
    */
  private def droppedByReaders(uuids: Seq[Option[java.util.UUID]]): Seq[Int] = {
    val last = scala.collection.mutable.Map[ProducerId, Long]()
    uuids.zipWithIndex.flatMap {
      case (None, _) => None
      case (Some(u), i) =>
        val (p, c) = (Uuid.producer(u), Uuid.clock(u))
        if (last.get(p).exists(_ >= c)) Some(i) else { last(p) = c; None }
    }
  }

  test("a row held back past the window, of a message committed twice, is never given the later copy's clock") {
    // Producer 1 commits m0 (clock 10) and m2 (12), goes back to an older ACK and commits m1 (11)
    // and m2 again: their sequence clocks 13 and 14. Producer 2's messages come between. The
    // window holds four: m2's first copy has left it, its second is still there.
    val emitted = new SequencedMessages(capacity = 4)
    val messages = Seq((1L, 10L, 10L), (1L, 12L, 12L), (2L, 1L, 1L), (1L, 11L, 13L), (1L, 12L, 14L), (2L, 2L, 2L))
    messages.foreach { case (p, c, s) => emitted.add("j", p, c, s) }
    // Every row held back until all six were emitted, in their order.
    val u = new OriginUuids(1L)
    val rows = messages.map { case (p, c, _) => u.next("j", origin(p, c), "", emitted) }
    assert(droppedByReaders(rows.map(_.toOption)).isEmpty, rows)
    // Each row given a UUID has its own message's sequence clock; m2's first copy's row is written at least once.
    rows.zip(messages).foreach { case (r, (_, _, s)) => r.foreach(uuid => assert(Uuid.clock(uuid) == s, rows)) }
    assert(rows(1).isLeft, rows)
  }

  test("rows an operator puts out of their messages' order are none of them dropped by readers") {
    val emitted = new SequencedMessages()
    Seq(10L, 11L, 12L).foreach(c => emitted.add("j", 1L, c, c))
    def rows(clocks: Long*) = {
      val u = new OriginUuids(1L)
      clocks.map(c => u.next("j", origin(1, c), "", emitted))
    }
    // m10, m12, m11: m11's row would fall below m12's under the same producer.
    val reordered = rows(10, 12, 11)
    // m10's two rows split by m11's: the second would take the first's producer and clock.
    val split = rows(10, 11, 10)
    assert(Seq(reordered, split).map(r => droppedByReaders(r.map(_.toOption))) == Seq(Nil, Nil), (reordered, split))
    // Those rows get no UUID from their origin (at least once); the others keep theirs.
    assert(reordered.map(_.isRight) == Seq(true, true, false) && reordered(2) == Left(OriginUuids.OutOfOrder))
    // A message's rows resumed after another's get none, the rest of them neither: which of its
    // rows they are is not told.
    assert(rows(10, 10, 11, 10, 10).map(_.isRight) == Seq(true, true, true, false, false))
    // Rows of two producers' messages put in another order take producers of their own: they keep theirs.
    val two = new SequencedMessages()
    Seq((1L, 10L), (2L, 5L)).foreach { case (p, c) => two.add("j", p, c, c) }
    val u = new OriginUuids(1L)
    assert(Seq((2L, 5L), (1L, 10L)).map { case (p, c) => u.next("j", origin(p, c), "", two).map(Uuid.clock) } ==
      Seq(Right(5L), Right(10L)))
  }

  test("a real-time batch run again, or after one a retry committed, maps rows over the journals and seed recorded " +
    "when it (or the batch before) first started, relabelled journals too") {
    val checkpoint = Files.createTempDirectory("gazette-rt-batches").toString
    val conf = new Configuration()
    val listed = SinkTargets(IndexedSeq("a", "b"), Map("a" -> "", "b" -> ""), "rendezvous")
    def batches = new RealTimeBatches(Some(checkpoint), conf)
    def targets(js: String*) = SinkTargets(js.toIndexedSeq, js.map(_ -> "").toMap, "rendezvous")
    // Looked up by name, of the journals the selector no longer matches: "b" exists still.
    val existing = (names: Seq[String]) => targets(names.filter(_ == "b"): _*)
    val (seed, first) = batches.start(5, listed, existing)
    val grown = listed.copy(journals = IndexedSeq("a", "b", "c"), contentTypes = listed.contentTypes + ("c" -> ""))
    val (again, replayed) = batches.start(5, grown, existing)
    assert(again == seed && replayed.journals == first.journals && replayed.contentTypes.contains("c"))
    // "b" relabelled, "a" deleted: the rerun keeps "b", known by name.
    assert(batches.start(5, targets("c"), existing)._2.journals == IndexedSeq("b"))
    // Spark plans each batch's write anew: the batch after the rerun, on an instance of its own,
    // maps rows over the journals the first run did, since the first run may have written some of
    // its rows; the batch after that over the journals listed.
    val (next, later) = batches.start(6, grown, existing)
    assert(next == seed && later.journals == IndexedSeq("a", "b"))
    val (last, listedNow) = batches.start(7, grown, existing)
    assert(last == seed && listedNow.journals == IndexedSeq("a", "b", "c"))
    // So does the batch after one that a task's retry committed; not the batch after one without.
    val four = targets("a", "b", "c", "d")
    batches.committed(7, retried = true)
    assert(batches.start(8, four, existing)._2.journals == IndexedSeq("a", "b", "c"))
    batches.committed(8, retried = false)
    assert(batches.start(9, four, existing)._2.journals == four.journals)
    // Where every journal of the retried batch was deleted since, the next batch takes the
    // journals listed, on every start of it: those rows went with their journals.
    batches.committed(9, retried = true)
    val moved = targets("e")
    val none = (_: Seq[String]) => targets()
    assert(batches.start(10, moved, none)._2.journals == IndexedSeq("e"))
    assert(batches.start(10, moved, none)._2.journals == IndexedSeq("e"))
    // Without a checkpoint nothing is recorded, and each batch has a seed of its own.
    assert(new RealTimeBatches(None, conf).start(5, listed, existing)._1 !=
      new RealTimeBatches(None, conf).start(5, listed, existing)._1)
  }

  test("a real-time run takes the journals listed as the batch before committed, once; a listing that failed " +
    "before it was taken is made again, one that fails while it is awaited fails the batch") {
    def targets(js: String*) = SinkTargets(js.toIndexedSeq, js.map(_ -> "").toMap, "rendezvous")
    val run = new RealTimeRun
    def refused: SinkTargets = throw new IllegalStateException("listed again")
    assert(run.targets(() => targets("a")).journals == IndexedSeq("a"))
    run.listAhead(() => targets("a", "b"))
    assert(run.targets(() => refused).journals == IndexedSeq("a", "b"))
    assert(run.targets(() => targets("c")).journals == IndexedSeq("c"))
    // Failed before it was taken (the failure is at once; the wait is ample): the outage may be over.
    run.listAhead(() => throw new IllegalStateException("broker down"))
    Thread.sleep(500)
    assert(run.targets(() => targets("d")).journals == IndexedSeq("d"))
    // Failing while awaited: its failure is the batch's, not a second wait of the retry budget.
    val release = new CountDownLatch(1)
    run.listAhead { () => release.await(); throw new IllegalStateException("broker down") }
    new Thread(() => { Thread.sleep(200); release.countDown() }).start()
    assert(intercept[IllegalStateException](run.targets(() => refused)).getMessage == "broker down")
    // The configuration (its broadcast Hadoop configuration) is made for the run's first batch only.
    var made = 0
    def config() = { made += 1; null }
    (1 to 3).foreach(_ => run.config(config()))
    assert(made == 1)
  }

  test("a real-time batch's planning waiting for the journals listed ahead stops at once when interrupted") {
    def targets(js: String*) = SinkTargets(js.toIndexedSeq, js.map(_ -> "").toMap, "rendezvous")
    val run = new RealTimeRun
    val release = new CountDownLatch(1)
    // A listing that takes long: a broker that does not answer is retried up to retryTimeout.
    run.listAhead { () => release.await(10, TimeUnit.SECONDS); targets("a") }
    val (ms, ended) = Interrupts.interrupted(run.targets(() => targets("b")), waitMs = 5000)
    release.countDown()
    assert(ms < 1000, s"planning ended $ms ms after its interrupt, with $ended")
    assert(ended.isInstanceOf[InterruptedException], ended)
  }

  test("an appender closed as soon as it is made closes at once, and takes no more rows") {
    // A writer closed as its task starts (a query stopped as a batch begins) closes its appender
    // before the appender's thread has run: the close must not wait out its timeout for it.
    val client = io.sparkgazette.client.GazetteClient("http://127.0.0.1:1")
    try {
      (1 to 500).foreach { i =>
        val appender = new RealTimeAppender(client, 1 << 20, s"gazette-sink-append-test-$i")
        val t0 = System.nanoTime()
        appender.close()
        val ms = (System.nanoTime() - t0) / 1000000
        assert(ms < 500, s"round $i: close took $ms ms")
        val e = intercept[IllegalStateException](appender.add("j", Array[Byte](1), 0, 1))
        assert(e.getMessage.contains("is closed"))
      }
    } finally client.close()
  }
}
