package io.sparkgazette.client

import io.sparkgazette.client.protocol.{Header, ListResponse, ProcessSpec, Route, Status}

/** List is server-streaming since Gazette v0.100: a snapshot arrives as a first message with the
  * status and header, then messages carrying only more journals, then the end of the stream.
  */
object ListResponses {

  /** Concatenates one snapshot, failing on a non-OK status or on an empty follow-up message. */
  def concat(selector: String, endpoint: String, responses: Iterator[ListResponse]): Seq[ListResponse.Journal] = {
    if (!responses.hasNext) throw new GazetteException(s"List of '$selector' via $endpoint: empty response stream")
    val first = responses.next()
    if (first.status != Status.OK)
      throw new BrokerStatusException("List", s"selector '$selector'", first.status, endpoint)
    val journals = Vector.newBuilder[ListResponse.Journal] ++= first.journals
    responses.foreach { r =>
      if (r.journals.isEmpty || r.status != Status.OK || r.header.exists(carries))
        throw new GazetteException(s"List of '$selector' via $endpoint: malformed follow-up response $r")
      journals ++= r.journals
    }
    journals.result()
  }

  // Brokers built with gogo protobuf send a follow-up's header as an empty message (the field is
  // not nullable): only a header that says something is out of place there.
  private def carries(h: Header): Boolean =
    !(h.processId.forall(_ == ProcessSpec.ID.defaultInstance) && h.route.forall(_ == Route.defaultInstance) &&
      h.etcd.forall(_ == Header.Etcd.defaultInstance))
}
