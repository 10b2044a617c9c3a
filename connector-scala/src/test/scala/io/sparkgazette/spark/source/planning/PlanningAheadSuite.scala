package io.sparkgazette.spark
package source
package planning

import scala.concurrent.duration._

import io.sparkgazette.client.{ClientConfig, GazetteClient}
import io.sparkgazette.spark.source.offsets.JournalTarget
import io.sparkgazette.testing.Interrupts
import org.scalatest.funsuite.AnyFunSuite

/** Planning a real-time batch from answers asked ahead, where the brokers do not answer: nothing
  * listens on port 1, so every List is refused and retried until the retry timeout.
  */
class PlanningAheadSuite extends AnyFunSuite {
  private val retry = 3.seconds

  private def withAhead(f: PlanningAhead => Unit): Unit = {
    val client = new GazetteClient(ClientConfig(Seq("http://127.0.0.1:1"), retryTimeout = retry, rpcTimeout = 1.second))
    val directory = new JournalDirectory(client, JournalTarget.BySelector("app=ahead"))
    try f(new PlanningAhead(directory))
    finally { directory.close(); client.close() }
  }

  test("planning fails after one retry timeout where the brokers did not answer the ask ahead") {
    withAhead { ahead =>
      val t0 = System.nanoTime()
      ahead.start(Set("a"))
      intercept[Exception](ahead.answers(Set("a")))
      val ms = (System.nanoTime() - t0) / 1000000
      assert(ms < retry.toMillis + 1500, s"planning failed after $ms ms, retryTimeout is ${retry.toMillis} ms")
    }
  }

  test("planning waiting for the answers asked ahead stops at once when interrupted, as Spark stops a query") {
    withAhead { ahead =>
      ahead.start(Set("a"))
      val (ms, ended) = Interrupts.interrupted(ahead.answers(Set("a")), waitMs = retry.toMillis * 3)
      assert(ms < 1000, s"planning ended $ms ms after its interrupt")
      assert(ended.isInstanceOf[InterruptedException], s"planning ended with $ended")
    }
  }
}
