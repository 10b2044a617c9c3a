package io.sparkgazette.client

import scala.concurrent.duration._

/** Retry pacing shared by every RPC: Gazette's own schedule (50 ms, 50 ms, 100 ms, 100 ms, 1 s,
  * 1 s, then 5 s), bounded by an overall `timeout` after which the caller gives up. `nanoTime`
  * and `sleep` are the clock it reads and how it waits (tests pass their own).
  */
final class Backoff(timeout: FiniteDuration, nanoTime: () => Long = () => System.nanoTime(),
    sleep: FiniteDuration => Unit = d => Thread.sleep(d.toMillis)) {
  private val schedule = Vector(50.millis, 50.millis, 100.millis, 100.millis, 1.second, 1.second, 5.seconds)
  private var started = nanoTime()
  private var attempt = 0

  /** Number of waits so far. */
  def attempts: Int = attempt

  /** Sleeps before the next attempt and returns true, or returns false once `timeout` is spent. */
  def pause(): Boolean = {
    val remaining = timeout - (nanoTime() - started).nanos
    if (remaining <= Duration.Zero) return false
    val wait = schedule(math.min(attempt, schedule.size - 1)) min remaining
    attempt += 1
    sleep(wait)
    true
  }

  /** Starts the schedule, and the timeout, over after progress was made: a reader open for hours
    * still retries a broker that restarts.
    */
  def reset(): Unit = { attempt = 0; started = nanoTime() }
}
