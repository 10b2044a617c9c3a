package io.sparkgazette.spark
package source

import io.sparkgazette.message.{Flags, Framing, ProducerId, ProducerState, StateTransfer}
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
}
