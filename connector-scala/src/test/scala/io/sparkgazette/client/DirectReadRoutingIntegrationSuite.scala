package io.sparkgazette.client

import scala.concurrent.duration._

import com.google.protobuf.ByteString
import io.sparkgazette.testing.{ClusterSuite, Journals}
import org.scalatest.funsuite.AnyFunSuite

/** Direct reads (do_not_proxy) on a cluster of several brokers: a broker that does not serve the
  * journal answers NOT_JOURNAL_BROKER, with the journal's route, instead of proxying the Read.
  */
class DirectReadRoutingIntegrationSuite extends AnyFunSuite with ClusterSuite {
  override protected def brokers: Int = 2

  test("a do_not_proxy Read answered NOT_JOURNAL_BROKER goes to the route it names, spending no retry") {
    val journals = (0 until 16).map(i => s"routing/part-$i")
    Journals.create(client, journals.map(Journals.spec(_)): _*)
    journals.foreach(j => client.append(j, ByteString.copyFromUtf8("{\"a\":1}\n")))
    val first = cluster.broker
    // A journal the configured broker is no replica of: learned from a read's header.
    val elsewhere = journals.find { j =>
      val r = client.read(j, 0)
      try r.toVector
      finally r.close()
      client.routes.endpoint(j) != first
    }
    assert(elsewhere.isDefined, "all 16 journals landed on the first broker")
    // Without direct reads the first broker proxies the Read; with them it answers
    // NOT_JOURNAL_BROKER and the header's route names the replica: following it is no failure,
    // yet the reader forgets the route (Routes.failed), sleeps a backoff, logs a retry at INFO
    // and spends its retry budget, once per journal and executor (and after every route change).
    for (direct <- Seq(false, true)) {
      val c = new GazetteClient(ClientConfig(Seq(first), retryTimeout = 1.millis, directFragmentReads = direct))
      try {
        val r = c.read(elsewhere.get, 0)
        try assert(r.toVector.map(_.content.size).sum == 8, s"directFragmentReads=$direct")
        finally r.close()
      } finally c.close()
    }
  }
}
