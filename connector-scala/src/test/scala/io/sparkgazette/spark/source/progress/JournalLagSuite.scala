package io.sparkgazette.spark
package source
package progress

import java.time.Instant

import io.sparkgazette.message.Clock
import io.sparkgazette.spark.source.progress.JournalLag.FragmentTime
import org.scalatest.funsuite.AnyFunSuite

class JournalLagSuite extends AnyFunSuite {
  test("a UUID clock is its producer's wall clock, to the millisecond, ticks ignored") {
    val at = Instant.parse("2026-11-22T12:34:56.789Z")
    assert(JournalLag.clockMillis(Clock.fromInstant(at)) == at.toEpochMilli)
    assert(JournalLag.clockMillis(Clock.fromInstant(at) + 15 * Clock.Tick) == at.toEpochMilli)
    assert(JournalLag.clockMillis(Clock.fromInstant(Instant.ofEpochMilli(-1500))) == -1500L)
  }

  test("an age is never negative: a producer's clock ahead of the driver's reads as no age") {
    assert(JournalLag.ageMs(10000L, 4000L) == 6000L)
    assert(JournalLag.ageMs(10000L, 10000L) == 0L)
    assert(JournalLag.ageMs(10000L, 12500L) == 0L)
  }

  test("a byte was written at most a second past the mod_time of the earliest persisted fragment holding it") {
    val fragments = Seq(
      FragmentTime(0, 100, 1000),
      FragmentTime(100, 200, 0), // only in a broker's spool
      FragmentTime(50, 150, 900), // an overlapping one persisted earlier
      FragmentTime(200, 300, 1200)
    )
    assert(JournalLag.persistedBy(fragments, 0) == Some(1001000L))
    assert(JournalLag.persistedBy(fragments, 99) == Some(901000L))
    assert(JournalLag.persistedBy(fragments, 120) == Some(901000L))
    assert(JournalLag.persistedBy(fragments, 150) == None)
    assert(JournalLag.persistedBy(fragments, 299) == Some(1201000L))
    assert(JournalLag.persistedBy(fragments, 300) == None)
    assert(JournalLag.persistedBy(Nil, 0) == None)
  }

  test("a trigger's time behind: least, average and most over the journals whose time is known, and how many are not") {
    val m = TimeBehindHeads.metrics(Map("a" -> Some(0L), "b" -> Some(1000L), "c" -> Some(2001L), "d" -> None))
    assert(m == Map("minTimeBehindHeadMs" -> "0", "avgTimeBehindHeadMs" -> "1000", "maxTimeBehindHeadMs" -> "2001",
      "journalsTimeBehindUnknown" -> "1"))
    assert(TimeBehindHeads.metrics(Map("a" -> None)) == Map("journalsTimeBehindUnknown" -> "1"))
    assert(TimeBehindHeads.metrics(Map.empty) == Map("journalsTimeBehindUnknown" -> "0"))
  }

  test("the newest message's clock is the greatest any task added, its age never negative, none before one") {
    val at = Instant.parse("2026-11-22T12:00:00Z")
    val tasks = Seq(at.minusSeconds(60), at.minusSeconds(5), at.minusSeconds(3600)).map { t =>
      val n = new NewestClock
      n.add(Clock.fromInstant(t))
      n.add(0L) // a message without a UUID
      n
    }
    val driver = new NewestClock
    assert(driver.isZero)
    tasks.foreach(driver.merge)
    assert(driver.value == Clock.fromInstant(at.minusSeconds(5)))
    assert(NewestClock.metrics(driver.value, at.toEpochMilli) == Map("newestMessageAgeMs" -> "5000"))
    assert(NewestClock.metrics(driver.value, at.toEpochMilli - 10000) == Map("newestMessageAgeMs" -> "0"))
    assert(NewestClock.metrics(0L, at.toEpochMilli) == Map.empty)
    assert(driver.copy().value == driver.value)
    driver.reset()
    assert(driver.isZero)
  }
}
