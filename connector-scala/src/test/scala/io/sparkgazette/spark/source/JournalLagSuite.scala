package io.sparkgazette.spark
package source

import java.time.Instant

import io.sparkgazette.message.Clock
import io.sparkgazette.spark.source.progress.JournalLag
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
}
