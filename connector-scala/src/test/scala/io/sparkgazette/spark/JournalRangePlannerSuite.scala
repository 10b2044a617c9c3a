package io.sparkgazette.spark

import org.scalacheck.Gen
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

class JournalRangePlannerSuite extends AnyFunSuite with ScalaCheckPropertyChecks {

  test("without a cap, ranges end at the write heads") {
    assert(JournalRangePlanner.capped(Map("a" -> 0, "b" -> 10), Map("a" -> 100, "b" -> 20), 1000) == Map("a" -> 100, "b" -> 20))
  }

  test("a cap is split in proportion to backlog, every journal with a backlog reading at least one byte") {
    val ends = JournalRangePlanner.capped(Map("a" -> 0, "b" -> 0, "c" -> 50), Map("a" -> 9000, "b" -> 1000, "c" -> 50), 1000)
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
    assert(JournalRangePlanner.ceiling(start, heads, Some(Map("a" -> 200L, "b" -> 900L))) == Map("a" -> 200L, "b" -> 1000L, "c" -> 5L))
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
    assert(tasks.count(t => t.exists(_._1.startsWith("big"))) == 2 && tasks.filter(_.exists(_._1.startsWith("big"))).forall(_.size == 1))
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
      val needed = math.max((small.map(_._2).sum + target - 1) / target, math.min(small.size, math.max(1, min - (ranges.size - small.size))))
      assert(tasks.count(_.forall(_._2 < target)) <= math.max(needed, 0L))
      assert(JournalRangePlanner.pack(ranges, (r: (String, Long)) => r._2, target, min) == tasks)
    }
  }
}
