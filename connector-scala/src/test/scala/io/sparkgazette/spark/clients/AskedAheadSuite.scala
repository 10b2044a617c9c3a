package io.sparkgazette.spark
package clients

import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.{CountDownLatch, TimeUnit}

import io.sparkgazette.testing.Interrupts
import org.scalatest.funsuite.AnyFunSuite

/** What a call asked ahead gives the caller that takes it: its answer once, for its key only, while
  * fresh and not failed; otherwise the caller's own call.
  */
class AskedAheadSuite extends AnyFunSuite {
  private def await(latch: CountDownLatch): Unit = assert(latch.await(10, TimeUnit.SECONDS), "the ask never ran")

  /** Starts an ask for `key` that answers `answer`, and waits until it has. */
  private def answered[K](ahead: AskedAhead[K, String], key: K, answer: String): Unit = {
    val done = new CountDownLatch(1)
    ahead.start(key) {
      try answer
      finally done.countDown()
    }
    await(done)
    Thread.sleep(50) // the future completes just after the ask returns
  }

  test("what was asked ahead for a key is taken once; the next take asks itself") {
    val ahead = new AskedAhead[String, String]()
    answered(ahead, "k", "ahead")
    assert(ahead.take("k")("now") == "ahead")
    assert(ahead.take("k")("now") == "now")
  }

  test("what was asked ahead for another key is not taken, and is gone") {
    val ahead = new AskedAhead[Set[String], String]()
    answered(ahead, Set("a"), "for a")
    assert(ahead.take(Set("a", "b"))("now") == "now")
    assert(ahead.take(Set("a"))("now") == "now")
  }

  test("a start replaces what was asked before") {
    val ahead = new AskedAhead[String, String]()
    answered(ahead, "k", "first")
    answered(ahead, "k", "second")
    assert(ahead.take("k")("now") == "second")
  }

  test("an answer older than the age allowed is asked again") {
    val ahead = new AskedAhead[String, String](maxAgeNanos = 20L * 1000 * 1000)
    answered(ahead, "k", "old")
    Thread.sleep(100)
    assert(ahead.take("k")("now") == "now")
  }

  test("an answer that failed before it was taken is asked again: the outage it met may be over") {
    val ahead = new AskedAhead[String, String]()
    val ran = new CountDownLatch(1)
    ahead.start("k") { ran.countDown(); throw new IllegalStateException("brokers down") }
    await(ran)
    Thread.sleep(200)
    assert(ahead.take("k")("now") == "now")
  }

  test("a failure still coming when taken is the caller's, as it was thrown, and not asked again") {
    val ahead = new AskedAhead[String, String]()
    val started, release = new CountDownLatch(1)
    ahead.start("k") { started.countDown(); release.await(); throw new IllegalStateException("brokers down") }
    await(started)
    val asked = new AtomicInteger()
    new Thread(() => { Thread.sleep(300); release.countDown() }).start()
    val e = intercept[IllegalStateException](ahead.take("k") { asked.incrementAndGet(); "now" })
    assert(e.getMessage == "brokers down")
    assert(asked.get == 0, "the caller asked a second time, waiting out a second retry budget")
  }

  test("waiting for an answer still coming ends at once when the caller is interrupted") {
    val ahead = new AskedAhead[String, String]()
    val never = new CountDownLatch(1)
    ahead.start("k") { never.await(); "late" }
    val (ms, ended) = Interrupts.interrupted(ahead.take("k")("now"))
    never.countDown()
    assert(ms < 1000, s"the wait ended $ms ms after its interrupt")
    assert(ended.isInstanceOf[InterruptedException], s"the wait ended with $ended")
  }

  test("after close, nothing asked ahead is taken") {
    val ahead = new AskedAhead[String, String]()
    answered(ahead, "k", "ahead")
    ahead.close()
    assert(ahead.take("k")("now") == "now")
  }
}
