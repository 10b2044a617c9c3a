package io.sparkgazette.spark
package source
package planning

import io.sparkgazette.spark.source.offsets.{JournalRange, Piece}
import org.scalacheck.Gen
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

class JournalRangePlannerSuite extends AnyFunSuite with ScalaCheckPropertyChecks {

  test("without a cap, ranges end at the write heads") {
    assert(JournalRangePlanner.capped(Map("a" -> 0, "b" -> 10), Map("a" -> 100, "b" -> 20), 1000) ==
      Map("a" -> 100, "b" -> 20))
  }

  test("a cap is split in proportion to backlog, every journal with a backlog reading at least one byte") {
    val ends =
      JournalRangePlanner.capped(Map("a" -> 0, "b" -> 0, "c" -> 50), Map("a" -> 9000, "b" -> 1000, "c" -> 50), 1000)
    assert(ends == Map("a" -> 900, "b" -> 100, "c" -> 50))
    val tiny = JournalRangePlanner.capped(Map("a" -> 0, "b" -> 0), Map("a" -> 1000000, "b" -> 10), 100)
    assert(tiny("b") == 1 && tiny("a") == 99)
  }

  test("capped ranges never pass the heads, never go backwards, and stay near the cap") {
    val journal = for (s <- Gen.choose(0L, 1L << 40); b <- Gen.choose(0L, 1L << 30)) yield (s, s + b)
    forAll(Gen.mapOfN(8, Gen.zip(Gen.alphaStr.suchThat(_.nonEmpty), journal)), Gen.choose(1L, 1L << 32)) { (js, cap) =>
      val start = js.map { case (j, (s, _)) => j -> s }
      val heads = js.map { case (j, (_, h)) => j -> h }
      val ends = JournalRangePlanner.capped(start, heads, cap)
      ends.foreach { case (j, e) => assert(e >= start(j) && e <= heads(j)) }
      val read = ends.map { case (j, e) => e - start(j) }.sum
      assert(read <= math.max(cap, 0L) + js.size)
    }
  }

  test("the ceiling is the head, capped for AvailableNow, and never below where the query stands") {
    val start = Map("a" -> 100L, "b" -> 1000L, "c" -> 5L)
    val heads = Map("a" -> 300L, "b" -> 1000L, "c" -> 50L)
    assert(JournalRangePlanner.ceiling(start, heads, None) == heads)
    // b's cap was read from a lagging replica; c joined after the run began.
    assert(JournalRangePlanner.ceiling(start, heads, Some(Map("a" -> 200L, "b" -> 900L))) ==
      Map("a" -> 200L, "b" -> 1000L, "c" -> 5L))
  }

  test("min bytes wait until enough arrived or the delay passed") {
    assert(JournalRangePlanner.shouldWait(10, Some(100), sinceLastBatchMs = 5, maxDelayMs = 1000))
    assert(!JournalRangePlanner.shouldWait(10, Some(100), sinceLastBatchMs = 2000, maxDelayMs = 1000))
    assert(!JournalRangePlanner.shouldWait(100, Some(100), 0, 1000))
    assert(!JournalRangePlanner.shouldWait(0, None, 0, 1000))
  }

  test("metrics report bytes behind head in total, at most and on average") {
    assert(JournalRangePlanner.metrics(Map("a" -> 10, "b" -> 0), Map("a" -> 30, "b" -> 40)) ==
      Map("bytesBehindHead" -> "60", "maxBytesBehindHead" -> "40", "avgBytesBehindHead" -> "30.0", "journals" -> "2"))
  }

  test("small ranges are packed into tasks by bytes, large ones are tasks of their own") {
    val ranges = (0 until 1000).map(i => f"j$i%04d" -> 1024L) ++ Seq("big-a" -> (64L << 20), "big-b" -> (16L << 20))
    val tasks = JournalRangePlanner.pack(ranges, (r: (String, Long)) => r._2, 16L << 20, minTasks = 2)
    assert(tasks.count(t => t.exists(_._1.startsWith("big"))) == 2 &&
      tasks.filter(_.exists(_._1.startsWith("big"))).forall(_.size == 1))
    assert(tasks.size == 3, "1,000 ranges of 1 KiB fit one task; the two large ones make the minimum of two")
    val spread = JournalRangePlanner.pack(ranges.take(1000), (r: (String, Long)) => r._2, 16L << 20, minTasks = 4)
    assert(spread.size == 4 && spread.map(_.size) == Seq(250, 250, 250, 250), "spread over the cores")
    assert(JournalRangePlanner.pack(ranges.take(3), (r: (String, Long)) => r._2, 16L << 20, minTasks = 8).size == 3)
  }

  test("packing keeps every range once, in tasks of about the target, and depends on the ranges alone") {
    forAll(Gen.listOf(Gen.choose(1L, 1L << 26)), Gen.choose(1L, 1L << 25), Gen.choose(1, 16)) { (sizes, target, min) =>
      val ranges = sizes.zipWithIndex.map { case (b, i) => s"j$i" -> b }
      val tasks = JournalRangePlanner.pack(ranges, (r: (String, Long)) => r._2, target, min)
      assert(tasks.flatten.sorted == ranges.sorted && tasks.forall(_.nonEmpty))
      tasks.filter(_.size > 1).foreach(t => assert(t.forall(_._2 < target)))
      assert(tasks.size >= math.min(ranges.size, min))
      val small = ranges.filter(_._2 < target)
      // Never more shared tasks than the bytes need, unless the cores do.
      val needed = math.max((small.map(_._2).sum + target - 1) / target,
        math.min(small.size, math.max(1, min - (ranges.size - small.size))))
      assert(tasks.count(_.forall(_._2 < target)) <= math.max(needed, 0L))
      assert(JournalRangePlanner.pack(ranges, (r: (String, Long)) => r._2, target, min) == tasks)
    }
  }

  private def range(j: String, start: Long, end: Long) = JournalRange(j, "application/x-ndjson", Map.empty, start, end)

  test("splitting cuts splittable ranges larger than the target into even pieces that cover them") {
    val rs = JournalRangePlanner.split(
      Seq(range("a", 100, 1300), range("b", 0, 300), range("c", 0, 5000)), _.journal != "c", 400, 1, 1)
    assert(rs.filter(_.journal == "a").map(_.piece) == Seq(Some(Piece(100, 500)), Some(Piece(500, 900)),
      Some(Piece(900, Long.MaxValue))))
    // Pieces of at least the target: a range under twice the target stays whole.
    assert(JournalRangePlanner.split(Seq(range("a", 0, 799)), _ => true, 400, 1, 1).map(_.piece) == Seq(None))
    assert(rs.filter(_.journal == "b").map(_.piece) == Seq(None))
    assert(rs.filter(_.journal == "c").map(_.piece) == Seq(None)) // not splittable
    assert(rs.filter(_.journal == "a").map(_.bytes).sum == 1200)
  }

  test("splitting for minPartitions cuts the largest pieces first, never below the smallest piece size") {
    val rs = JournalRangePlanner.split(
      Seq(range("a", 0, 8L << 20), range("b", 0, 3L << 20), range("c", 0, 10)), _ => true, 16L << 20, 8, 1L << 20)
    assert(rs.size == 8)
    assert(rs.count(_.journal == "a") == 5 && rs.count(_.journal == "b") == 2)
    assert(rs.forall(r => r.journal == "c" || r.bytes >= (1L << 20)))
    val few = JournalRangePlanner.split(Seq(range("a", 0, 3L << 20)), _ => true, 16L << 20, 100, 1L << 20)
    assert(few.size == 3)
  }

  test("pieces cover each range exactly once, the first at its start, whatever the sizes") {
    forAll(Gen.listOfN(5, Gen.zip(Gen.choose(0L, 1L << 40), Gen.choose(1L, 1L << 32))), Gen.choose(1L, 1L << 30),
      Gen.choose(1, 64)) {
      (spans, target, minTasks) =>
        val ranges = spans.zipWithIndex.map { case ((s, b), i) => range(s"j$i", s, s + b) }
        val pieces = JournalRangePlanner.split(ranges, _ => true, target, minTasks, 1L << 10)
        ranges.foreach { r =>
          val ps = pieces.filter(_.journal == r.journal)
          assert(ps.head.first && ps.map(_.bytes).sum == r.bytes)
          ps.zip(ps.drop(1)).foreach { case (a, b) => assert(a.piece.get.until == b.piece.get.from && a.bytes > 0) }
          if (ps.size > 1) assert(ps.last.piece.get.until == Long.MaxValue)
        }
    }
  }
}
