package io.sparkgazette.client

import io.sparkgazette.client.protocol.{ListResponse, Status}

/** List is server-streaming since Gazette v0.100: a snapshot arrives as a first message with the
  * status and header, then messages carrying only more journals, then the end of the stream.
  */
object ListResponses {

  /** Concatenates one snapshot, failing on a non-OK status or on an empty follow-up message. */
  def concat(selector: String, endpoint: String, responses: Iterator[ListResponse]): Seq[ListResponse.Journal] = {
    if (!responses.hasNext) throw new GazetteException(s"List of '$selector' via $endpoint: empty response stream")
    val first = responses.next()
    if (first.status != Status.OK) throw new BrokerStatusException("List", s"selector '$selector'", first.status, endpoint)
    val journals = Vector.newBuilder[ListResponse.Journal] ++= first.journals
    responses.foreach { r =>
      if (r.journals.isEmpty || r.status != Status.OK || r.header.isDefined)
        throw new GazetteException(s"List of '$selector' via $endpoint: malformed follow-up response $r")
      journals ++= r.journals
    }
    journals.result()
  }
}
