package io.sparkgazette.client

import scala.collection.mutable
import scala.concurrent.duration._

import org.scalatest.funsuite.AnyFunSuite

class BackoffSuite extends AnyFunSuite {
  // A clock the test moves: sleeping advances it by the wait, and nothing else does.
  private final class Clock {
    var now = 0L
    val waits = mutable.Buffer[FiniteDuration]()
    def backoff(timeout: FiniteDuration) = new Backoff(timeout, () => now, d => { waits += d; now += d.toNanos })
  }

  test("waits follow Gazette's schedule, the last cut to what is left of the timeout, then give up") {
    val c = new Clock
    val b = c.backoff(2500.millis)
    while (b.pause()) {}
    assert(c.waits == Seq(50, 50, 100, 100, 1000, 1000, 200).map(_.millis))
    assert(b.attempts == 7 && !b.pause())
  }

  test("progress starts the timeout over: a reader open longer than it still retries") {
    val c = new Clock
    val b = c.backoff(300.millis)
    c.now += 400.millis.toNanos
    b.reset()
    assert(b.pause(), "a failure right after progress must be retried")
    assert(c.waits == Seq(50.millis), "the schedule starts over")
    c.now += 400.millis.toNanos
    assert(!b.pause(), "without progress the timeout still ends the retries")
  }
}
