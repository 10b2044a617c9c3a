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
}
