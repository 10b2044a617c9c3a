package io.sparkgazette.message

/** Bytes at `[begin, end)` of `journal` that are not a well-formed message, and why. */
final case class MalformedMessage(journal: String, begin: Long, end: Long, reason: String) {
  def describe: String = s"malformed message in journal $journal at offset $begin (${end - begin} bytes): $reason"
}

/** Thrown when a malformed message is met and the reader was asked to fail. */
final class MalformedMessageException(val malformed: MalformedMessage) extends RuntimeException(malformed.describe)
