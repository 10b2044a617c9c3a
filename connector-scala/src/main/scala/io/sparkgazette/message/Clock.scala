package io.sparkgazette.message

import java.time.Instant

/** Gazette's message Clock: a v1 UUID timestamp (100 ns units since 1582-10-15) shifted left by
  * four, whose low four bits count ticks within one timestamp. Only per-producer order matters;
  * readers never rely on the tick size.
  */
object Clock {

  /** 100 ns units from the Gregorian epoch of v1 UUIDs to the Unix epoch. */
  val GregorianToUnix: Long = 122192928000000000L

  /** The clock at instant `t`, with a zero tick count. */
  def fromInstant(t: Instant): Long =
    (Math.addExact(Math.multiplyExact(t.getEpochSecond, 10000000L), t.getNano / 100L) + GregorianToUnix) << 4

  /** The instant a clock was taken (ticks ignored). */
  def toInstant(clock: Long): Instant = {
    val unix100ns = (clock >>> 4) - GregorianToUnix
    Instant.ofEpochSecond(Math.floorDiv(unix100ns, 10000000L), Math.floorMod(unix100ns, 10000000L) * 100L)
  }

  /** The size of one [[Publisher]] tick since Gazette v0.101: one microsecond. */
  val Tick: Long = 160L

  /** Converts a horizon in nanoseconds to clock units. */
  def ofNanos(nanos: Long): Long = (nanos / 100L) << 4
}

/** A producer's monotonic clock: updated from wall time, never moving backwards, and ticked once
  * per message so that a producer's UUIDs are totally ordered.
  */
final class MonotonicClock(initial: Long = 0L) {
  private var value = initial

  def current: Long = synchronized(value)

  /** Moves the clock to `t` unless it is already past it. */
  def update(t: Instant): Unit = synchronized {
    val c = Clock.fromInstant(t)
    if (c > value) value = c
  }

  /** Advances by one tick and returns the new value. */
  def tick(): Long = synchronized {
    value += Clock.Tick
    value
  }
}
