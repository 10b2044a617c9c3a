package io.sparkgazette.client

import java.util.concurrent.TimeUnit

import io.sparkgazette.client.protocol.{JournalGrpc, ReadRequest, Status}

/** How a broker answers a metadata Read at an offset, as is: no retry, no listing consulted. */
object ReadProbe {
  def metadata(broker: String, journal: String, offset: Long): (Status, Long) = {
    val channels = new Channels()
    try {
      val responses = JournalGrpc.blockingStub(channels(broker)).withDeadlineAfter(30, TimeUnit.SECONDS)
        .read(ReadRequest(journal = journal, offset = offset, metadataOnly = true))
      val r = responses.next()
      (r.status, if (r.status == Status.OK) r.offset else r.writeHead)
    } finally channels.close()
  }
}
