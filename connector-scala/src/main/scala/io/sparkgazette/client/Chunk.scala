package io.sparkgazette.client

import com.google.protobuf.ByteString

/** Journal bytes `[offset, offset + content.size())` as delivered by a read. */
final case class Chunk(offset: Long, content: ByteString) {
  def end: Long = offset + content.size()
}
