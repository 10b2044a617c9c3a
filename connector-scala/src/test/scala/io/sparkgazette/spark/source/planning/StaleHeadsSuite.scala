package io.sparkgazette.spark
package source
package planning

import io.sparkgazette.spark.source.planning.StaleHeads.{Behind, Grew, Waiting}
import org.scalatest.funsuite.AnyFunSuite

class StaleHeadsSuite extends AnyFunSuite {

  test("heads at or past the offsets have no verdict") {
    val heads = new StaleHeads(_ => 1000)
    assert(heads.judge(Map("a" -> 10, "b" -> 5), Map("a" -> 10, "b" -> 7), 0).isEmpty)
  }

  test("a head behind is waited for through the grace period, then said once to have gone backwards") {
    val heads = new StaleHeads(_ => 1000)
    assert(heads.judge(Map("a" -> 100), Map("a" -> 40), 5000) == Map("a" -> Waiting(100, 40, 0, first = true)))
    assert(heads.judge(Map("a" -> 100), Map("a" -> 40), 5999) == Map("a" -> Waiting(100, 40, 999, first = false)))
    assert(heads.judge(Map("a" -> 100), Map("a" -> 40), 6000) == Map("a" -> Behind(100, 40, 40, 1000, first = true)))
    assert(heads.judge(Map("a" -> 100), Map("a" -> 40), 9000) == Map("a" -> Behind(100, 40, 40, 4000, first = false)))
  }

  test("a head that comes back ends the episode: the next one waits its own grace period") {
    val heads = new StaleHeads(_ => 1000)
    heads.judge(Map("a" -> 100), Map("a" -> 40), 0)
    assert(heads.judge(Map("a" -> 100), Map("a" -> 40), 2000)("a").isInstanceOf[Behind])
    assert(heads.judge(Map("a" -> 100), Map("a" -> 100), 2500).isEmpty)
    assert(heads.judge(Map("a" -> 100), Map("a" -> 90), 3000) == Map("a" -> Waiting(100, 90, 0, first = true)))
  }

  test("journals are judged apart, and a journal no longer read is forgotten") {
    val heads = new StaleHeads(_ => 1000)
    heads.judge(Map("a" -> 100, "b" -> 100), Map("a" -> 0, "b" -> 100), 0)
    val later = heads.judge(Map("a" -> 100, "b" -> 100), Map("a" -> 0, "b" -> 50), 1500)
    assert(later == Map("a" -> Behind(100, 0, 0, 1500, first = true), "b" -> Waiting(100, 50, 0, first = true)))
    heads.judge(Map("b" -> 100), Map("b" -> 100), 1600)
    assert(heads.judge(Map("a" -> 100), Map("a" -> 0), 1700) == Map("a" -> Waiting(100, 0, 0, first = true)))
  }

  test("each journal has its own grace period") {
    val heads = new StaleHeads(j => if (j == "slow") 5000 else 1000)
    heads.judge(Map("fast" -> 9, "slow" -> 9), Map("fast" -> 0, "slow" -> 0), 0)
    val verdicts = heads.judge(Map("fast" -> 9, "slow" -> 9), Map("fast" -> 0, "slow" -> 0), 2000)
    assert(
      verdicts.map { case (j, v) => j -> v.getClass.getSimpleName } == Map("fast" -> "Behind", "slow" -> "Waiting"))
  }

  test(
    "a head that grows while behind is a suspect, with the episode's lowest head; confirmed, it has gone backwards") {
    val heads = new StaleHeads(_ => 60000)
    heads.judge(Map("a" -> 100), Map("a" -> 20), 0)
    heads.judge(Map("a" -> 100), Map("a" -> 10), 10)
    assert(heads.judge(Map("a" -> 100), Map("a" -> 30), 20) == Map("a" -> Grew(100, 30, 10, 20)))
    assert(heads.waiting == 1) // not confirmed: still waiting
    assert(heads.judge(Map("a" -> 100), Map("a" -> 30), 30) == Map("a" -> Waiting(100, 30, 30, first = false)))
    assert(heads.judge(Map("a" -> 100), Map("a" -> 60), 40) == Map("a" -> Grew(100, 60, 10, 40)))
    heads.confirm("a")
    assert(heads.judge(Map("a" -> 100), Map("a" -> 70), 50) == Map("a" -> Behind(100, 70, 10, 50, first = false)))
    assert(heads.waiting == 0)
  }

  test("waiting counts the journals within their grace period") {
    val heads = new StaleHeads(_ => 1000)
    heads.judge(Map("a" -> 100, "b" -> 100, "c" -> 5), Map("a" -> 0, "b" -> 0, "c" -> 5), 0)
    assert(heads.waiting == 2)
    heads.judge(Map("a" -> 100, "b" -> 100), Map("a" -> 0, "b" -> 100), 2000)
    assert(heads.waiting == 0)
  }

  test("no grace period: a head behind has gone backwards at once") {
    assert(
      new StaleHeads(_ => 0).judge(Map("a" -> 100), Map("a" -> 0), 7) == Map("a" -> Behind(100, 0, 0, 0, first = true)))
  }
}
