package io.sparkgazette.client

import scala.concurrent.duration._

import com.google.protobuf.ByteString
import io.sparkgazette.client.protocol.{AppendRequest, Status}

/** A journal's registers, as the broker reports them to a zero-byte append (which writes
  * nothing and changes no register).
  */
object RegisterProbe {
  def registers(broker: String, journal: String): Seq[(String, String)] = {
    val channels = new Channels()
    try {
      val r = Append.attempt(channels(broker), AppendRequest(journal = journal), ByteString.EMPTY, 1 << 20, 30.seconds)
      if (r.status != Status.OK) throw new IllegalStateException(s"probing the registers of $journal: ${r.status}")
      r.registers.toSeq.flatMap(_.labels).map(l => l.name -> l.value)
    } finally channels.close()
  }
}
