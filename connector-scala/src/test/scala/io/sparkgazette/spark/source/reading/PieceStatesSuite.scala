package io.sparkgazette.spark
package source
package reading

import io.sparkgazette.message.{Flags, Framing, ProducerId, ProducerState, StateTransfer}
import io.sparkgazette.spark.source.offsets.JournalRange
import io.sparkgazette.spark.source.planning.JournalRangePlanner
import org.scalatest.funsuite.AnyFunSuite

/** Planning the pieces' states, with the first pass replaced by a function of its parts. */
class PieceStatesSuite extends AnyFunSuite {
  private val MiB = 1L << 20
  private val P = ProducerId(7)

  private def range(j: String, bytes: Long) = JournalRange(j, Framing.JsonLines, Map.empty, 0L, bytes)

  private def pieces(rs: Seq[JournalRange], minTasks: Int) =
    JournalRangePlanner.split(rs, _ => true, Long.MaxValue / 4, minTasks, minPieceBytes = 4 * MiB)

  // A part's transfer: producer P acknowledged at the part's first offset.
  private def acked(parts: Seq[PieceStates.Part]) = parts.map { p =>
    val t = new StateTransfer()
    t.add(P, p.from + 1, Flags.AckTxn, p.from)
    PieceStates.Result(Some(t), p.until - p.from)
  }

  test("each piece but the first carries the transfer of every part before it, parts cut for the cores") {
    var asked = Seq.empty[PieceStates.Part]
    val planned = PieceStates.attach(pieces(Seq(range("a", 64 * MiB), range("b", MiB)), 4), _ => 3L, 8,
      parts => { asked = parts; acked(parts) })
    val a = planned.ranges.filter(_.journal == "a")
    assert(a.size == 3 && planned.ranges.count(_.journal == "b") == 1 && planned.split == 1)
    // Two pieces before the last, each cut into 4 parts (8 cores): only the first reads from the state's resume.
    assert(asked.size == 8 && asked.map(_.resume) == Some(3L) +: Seq.fill(7)(None))
    assert(asked.map(_.until).dropRight(1) == asked.map(_.from).drop(1))
    assert(planned.prescanned == asked.map(p => p.until - p.from).sum)
    assert(a.head.piece.get.before.isEmpty)
    a.tail.foreach { piece =>
      val lastPart = asked.filter(_.until <= piece.piece.get.from).last
      assert(piece.piece.get.before.get.apply("a", Nil) == Seq(ProducerState("a", P, lastPart.from + 1, -1L)))
    }
  }

  test("a range whose transfer is too large is read whole, and named") {
    val planned = PieceStates.attach(pieces(Seq(range("a", 64 * MiB)), 4), _ => 0L, 2,
      parts => acked(parts).updated(1, PieceStates.Result(None, 0L)))
    assert(planned.ranges == Seq(range("a", 64 * MiB)))
    assert(planned.tooLarge == Seq("a") && planned.split == 0)
  }

  test("nothing to split, no pass") {
    val planned = PieceStates.attach(Seq(range("a", MiB)), _ => 0L, 2, _ => fail("no pass expected"))
    assert(planned.ranges == Seq(range("a", MiB)) && planned.prescanned == 0L)
  }

  // Review finding: the pass bounds each part's transfer by MaxTransferSize, but the driver collects
  // every part's transfer before it composes them and decides whether the range fits: its memory,
  // and the serialized results of the pass's job (capped by spark.driver.maxResultSize, 1 GiB by
  // default), grow with parts x producers. A journal whose 100,000 producers each write about once
  // per 10 MiB (100-byte messages), a 4 GiB backlog and 200 cores: 398 parts of ~10 MiB, each with
  // the same 100,000 producers (composed, still 100,000 < MaxTransferSize: the range is split).
  test("the first pass's results for one plan fit the driver's default maxResultSize") {
    val GiB = 1L << 30
    val ranges = JournalRangePlanner.split(Seq(range("a", 4 * GiB)), _ => true, Long.MaxValue / 4, 200,
      minPieceBytes = 16 * MiB)
    var parts = Seq.empty[PieceStates.Part]
    PieceStates.attach(ranges, _ => 0L, 200,
      ps => { parts = ps; ps.map(_ => PieceStates.Result(Some(new StateTransfer()), 0L)) })
    val perPart = new StateTransfer()
    (1L to 100000L).foreach(p => perPart.add(ProducerId(p), 1000 + p, Flags.OutsideTxn, p * 100))
    val bytes = new java.io.ByteArrayOutputStream()
    val out = new java.io.ObjectOutputStream(bytes)
    out.writeObject(PieceStates.Result(Some(perPart), 10 * MiB))
    out.close()
    // The most the parts may bring back: each at most its bound of producers and moves.
    val perEntry = bytes.size().toDouble / perPart.size
    val most = parts.map(_.maxTransferSize).sum * perEntry
    info(f"${parts.size} parts, at most ${parts.head.maxTransferSize} entries each: $most%.0f bytes")
    assert(parts.size > 100 && most <= GiB / 4, s"${parts.size} parts may bring back $most bytes to the driver")
  }

  // The pass's results come back to the driver with `spark.serializer`, Kryo on many clusters,
  // which rebuilds a transfer's LongMap as a HashMap in a field the JVM then calls as a LongMap
  // (a crash of the driver's JVM, SIGSEGV): the job ships bytes. The field's class is checked
  // before anything calls it.
  test("the first pass's job returns exact transfers with spark.serializer=KryoSerializer") {
    val t = new StateTransfer()
    (1L to 3L).foreach(p => t.add(ProducerId(p), 100 + p, Flags.ContinueTxn, p * 10))
    val spark = org.apache.spark.sql.SparkSession.builder().master("local[1]").appName("kryo")
      .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
      .config("spark.ui.enabled", "false").getOrCreate()
    try {
      val parts = Seq(PieceStates.Part(range("a", 8 * MiB), 0L, 4 * MiB, Some(0L)))
      val back = PieceStates.runJob(parts, "kryo", (p: PieceStates.Part) => PieceStates.Result(Some(t), p.until))
      val field = classOf[StateTransfer].getDeclaredField("producers")
      field.setAccessible(true)
      val held = field.get(back.head.transfer.get).getClass
      assert(held == classOf[scala.collection.mutable.LongMap[_]], s"the transfer came back holding a $held")
      assert(back.head.transfer.get.apply("a", Nil) == t.apply("a", Nil) && back.head.bytes == 4 * MiB)
    } finally spark.stop()
  }
}
