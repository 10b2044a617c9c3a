package io.sparkgazette.client

import scala.concurrent.duration._

import org.scalatest.funsuite.AnyFunSuite

class BackoffSuite extends AnyFunSuite {
  test("progress starts the timeout over: a reader open longer than it still retries") {
    val b = new Backoff(300.millis)
    Thread.sleep(400)
    b.reset()
    assert(b.pause(), "a failure right after progress must be retried")
    Thread.sleep(400)
    assert(!b.pause(), "without progress the timeout still ends the retries")
  }
}
