package io.sparkgazette.client

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.atomic.AtomicLong

import scala.concurrent.duration._

import io.sparkgazette.testing.{ClusterSuite, Journals}
import org.scalatest.funsuite.AnyFunSuite

/** A blocking Read of a journal nobody appends to stays open for as long as it waits, as a
  * real-time task's Read of a quiet journal must. Gazette's brokers close a connection that pings
  * them more often than every 5 minutes (GOAWAY too_many_pings); with 30 s pings, such a Read
  * failed after about 2 minutes plus its retry budget. It takes minutes, so `make test-idle-reads`
  * runs it (IDLE_READ_SECONDS, 210 there) and `make test` does not.
  */
class IdleReadIntegrationSuite extends AnyFunSuite with ClusterSuite {
  private val idle = sys.env.get("IDLE_READ_SECONDS").map(_.toLong.seconds)

  test("a blocking Read of an idle journal is still open, and delivers, minutes later") {
    assume(idle.isDefined, "runs with IDLE_READ_SECONDS set (make test-idle-reads)")
    val quiet = new GazetteClient(ClientConfig(Seq(cluster.broker), retryTimeout = 5.seconds))
    try {
      Journals.create(client, Journals.spec("idle/quiet"))
      val read = quiet.read("idle/quiet", 0, 0, block = true)
      val first = new AtomicLong(-1)
      val failure = new java.util.concurrent.atomic.AtomicReference[Throwable]()
      val reader = new Thread(() =>
        try if (read.hasNext) first.set(read.next().offset)
        catch { case e: Throwable => failure.set(e) })
      reader.setDaemon(true)
      reader.start()
      reader.join(idle.get.toMillis)
      assert(failure.get == null, s"the idle Read failed: ${failure.get}")
      client.append("idle/quiet", "{\"a\":1}\n".getBytes(UTF_8))
      reader.join(30000)
      assert(first.get == 0, s"the Read delivered nothing after ${idle.get}: ${failure.get}")
    } finally quiet.close()
  }
}
