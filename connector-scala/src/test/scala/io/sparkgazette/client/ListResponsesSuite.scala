package io.sparkgazette.client

import io.sparkgazette.client.protocol._
import org.scalatest.funsuite.AnyFunSuite

class ListResponsesSuite extends AnyFunSuite {
  private def journal(name: String) = ListResponse.Journal(spec = Some(JournalSpec(name = name)))
  private val header = Some(Header(etcd = Some(Header.Etcd(revision = 7))))

  test("a snapshot split across messages is concatenated in order") {
    val first = ListResponse(status = Status.OK, header = header, journals = (0 until 25).map(i => journal(s"j/$i")))
    val rest = Seq(
      ListResponse(journals = (25 until 50).map(i => journal(s"j/$i"))),
      ListResponse(journals = Seq(journal("j/50"))))
    val all = ListResponses.concat("prefix=j/", "http://b", Iterator(first) ++ rest)
    assert(all.map(_.getSpec.name) == (0 to 50).map(i => s"j/$i"))
  }

  test("an empty listing is one message with no journals") {
    assert(ListResponses.concat("x=y", "http://b", Iterator(ListResponse(header = header))).isEmpty)
  }

  test("a non-OK status fails naming the selector and endpoint") {
    val e = intercept[BrokerStatusException] {
      ListResponses.concat("x=y", "http://b:1", Iterator(ListResponse(status = Status.INSUFFICIENT_JOURNAL_BROKERS)))
    }
    assert(e.getMessage.contains("selector 'x=y'") && e.getMessage.contains("http://b:1"))
  }

  test("an empty follow-up message, or one with a header, is a protocol error") {
    val first = ListResponse(header = header, journals = Seq(journal("a/1")))
    intercept[GazetteException](ListResponses.concat("s", "e", Iterator(first, ListResponse())))
    intercept[GazetteException](
      ListResponses.concat("s", "e", Iterator(first, ListResponse(header = header, journals = Seq(journal("a/2"))))))
    intercept[GazetteException](ListResponses.concat("s", "e", Iterator.empty))
  }

  test("a follow-up's empty header, as gogo-built brokers send it past 1,000 journals, is no header") {
    val first = ListResponse(header = header, journals = Seq(journal("a/1")))
    val empty = Some(Header(Some(ProcessSpec.ID()), Some(Route()), Some(Header.Etcd())))
    val all =
      ListResponses.concat("s", "e", Iterator(first, ListResponse(header = empty, journals = Seq(journal("a/2")))))
    assert(all.map(_.getSpec.name) == Seq("a/1", "a/2"))
  }
}
