package io.sparkgazette.client

import java.net.ServerSocket

import scala.concurrent.duration.{FiniteDuration, MILLISECONDS, SECONDS}

import io.sparkgazette.client.protocol.Fragment
import org.scalatest.funsuite.AnyFunSuite

class FragmentHolesSuite extends AnyFunSuite {
  private def persisted(begin: Long, end: Long) = Fragment(begin = begin, end = end, modTime = 1700000000L)
  private def spooled(begin: Long, end: Long) = Fragment(begin = begin, end = end)

  test("an offset a fragment covers resumes where it is, persisted or not") {
    assert(FragmentHoles.resume(Seq(persisted(0, 100), spooled(100, 200)), 50).contains(50L))
    assert(FragmentHoles.resume(Seq(persisted(0, 100), spooled(100, 200)), 150).contains(150L))
  }

  test("a hole before a persisted fragment resumes at that fragment, the nearest of several") {
    val fragments = Seq(persisted(300, 400), persisted(0, 100), persisted(200, 300))
    assert(FragmentHoles.resume(fragments, 100).contains(200L))
    assert(FragmentHoles.resume(fragments, 0).contains(0L))
    assert(FragmentHoles.resume(Seq(persisted(500, 600)), 0).contains(500L))
  }

  test("a hole before a fragment still in a spool resumes there too: what retention left of an idle journal") {
    assert(FragmentHoles.resume(Seq(spooled(500, 600)), 0).contains(500L))
  }

  test("nothing listed at or after the offset resumes nowhere") {
    assert(FragmentHoles.resume(Seq.empty, 0).isEmpty)
    assert(FragmentHoles.resume(Seq(persisted(0, 100)), 100).isEmpty)
  }

  // A listing that never came is blamed on the store only where the broker still answers: one
  // gone since its Read is the broker's.
  test("a broker that answers nothing is reported unreachable, not as a store it has not listed") {
    val port = {
      val s = new ServerSocket(0);
      try s.getLocalPort
      finally s.close()
    }
    val client = new GazetteClient(
      ClientConfig(Seq(s"http://127.0.0.1:$port"), retryTimeout = FiniteDuration(1, SECONDS),
        rpcTimeout = FiniteDuration(500, MILLISECONDS)))
    try {
      val e = intercept[BrokerUnavailableException](FragmentHoles.resume(client, "holes/gone", 0))
      assert(!e.isInstanceOf[StoreUnavailableException], e.getMessage)
      assert(e.getMessage.contains("ListFragments of journal holes/gone"), e.getMessage)
    } finally client.close()
  }
}
