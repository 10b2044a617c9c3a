package io.sparkgazette.message

import java.io.ByteArrayOutputStream
import java.util.UUID

/** How messages are laid out in a journal, chosen by its `content-type` label as Gazette does,
  * and where each message keeps its UUID.
  *
  * Reading, a framing splits a journal's bytes into messages and finds each one's UUID; writing,
  * it frames a payload with a UUID set into it. A message without a UUID (absent, empty, or
  * the zero UUID) is outside any transaction.
  */
trait Framing {

  /** The `content-type` label value that selects this framing. */
  def contentType: String

  /** A fresh unpacker for one sequential read of a journal: some framings carry state from
    * message to message (CSV's field count).
    */
  private[message] def newUnpacker(): Unpacker

  /** An unpacker that, with `validate` false, may skip checks a message's well-formedness needs
    * beyond finding its end and its UUID (ndjson: the JSON syntax of the rest of the line): the
    * same messages and UUIDs for well-formed input, anything for the rest. For readers whose
    * caller fails on a malformed message anyway (see [[MessageIterator]]).
    */
  private[message] def newUnpacker(validate: Boolean): Unpacker = newUnpacker()

  /** Appends `payload`, framed, with `uuid` set into it, to `out`. A UUID the payload holds is
    * replaced, as Gazette's Publisher sets a message's UUID whatever it held (a CSV payload is the
    * fields after the UUID column: it holds none).
    * @throws MessageFormatException if `payload` cannot be framed
    */
  def frame(payload: Array[Byte], uuid: UUID, out: ByteArrayOutputStream): Unit

  /** Appends an acknowledgement carrying `uuid` to `out`, shaped like `like`, a payload of the
    * transaction it acknowledges (CSV acknowledgements have the same width, as Gazette's do).
    */
  def frameAck(uuid: UUID, like: Array[Byte], out: ByteArrayOutputStream): Unit
}

object Framing {
  val JsonLines: String = "application/x-ndjson"
  val Csv: String = "text/csv"
  val ProtobufFixed: String = "application/x-protobuf-fixed"

  /** The pointer Estuary Flow and our connector use by default; Gazette's examples use `/UUID`. */
  val DefaultUuidPointer: String = "/_meta/uuid"

  /** Gazette's examples keep the UUID in `bytes uuid = 1`. */
  val DefaultUuidField: Int = 1

  /** Whether every message of this content type ends at a newline, and every newline ends a
    * message (JSON strings escape theirs; CSV quotes may hold them; fixed frames may contain any
    * byte): a reader may then begin at any line start ([[LineStart]]).
    */
  def splitsAtNewlines(contentType: String): Boolean = contentType == JsonLines

  /** The framing for a journal's `content-type`, or why there is none. */
  def forContentType(
      contentType: String,
      uuidPointer: String = DefaultUuidPointer,
      uuidField: Int = DefaultUuidField
  ): Either[String, Framing] = contentType match {
    case JsonLines => Right(new JsonFraming(uuidPointer))
    case Csv => Right(CsvFraming)
    case ProtobufFixed => Right(new FixedFraming(uuidField))
    case null | "" => Left("journal has no content-type label")
    case other =>
      Left(s"unrecognized content-type ($other); expected one of $JsonLines, $Csv, $ProtobufFixed")
  }
}

/** A payload that cannot be framed as asked. */
final class MessageFormatException(message: String) extends IllegalArgumentException(message)

/** What an [[Unpacker]] made of the bytes at a message boundary. */
private[message] sealed trait Unpacked

private[message] object Unpacked {

  /** The bytes seen so far end inside a message. */
  case object NeedMore extends Unpacked

  /** A message of `length` bytes whose payload is `[payloadFrom, payloadUntil)`; `members`, where
    * its framing found them, as [[RawMessage.members]] says.
    */
  final case class Message(length: Int, payloadFrom: Int, payloadUntil: Int, uuid: UUID, members: Array[Int] = null)
      extends Unpacked

  /** `length` bytes that hold no message, e.g. a trailing blank line. */
  final case class Skip(length: Int) extends Unpacked

  /** `length` bytes that are not a well-formed message, and why. */
  final case class Malformed(length: Int, reason: String) extends Unpacked
}

/** Splits messages from a buffer, one at a time, starting at a message boundary. */
private[message] trait Unpacker {

  /** Examines `b[from, until)`; `atEnd` says no further bytes follow, `moreReady` that more do
    * without waiting on the journal's appends (asking for them never holds back a message whose
    * bytes are here). Never returns NeedMore when `atEnd` is set, and never a zero length otherwise.
    */
  def unpack(b: Array[Byte], from: Int, until: Int, atEnd: Boolean, moreReady: Boolean): Unpacked

  /** Forgets a partly seen message: reading resumes at a new boundary after an offset jump. */
  def restart(): Unit = ()

  /** Whether asking again about a message still incomplete costs only the bytes added since
    * (a line's end searched from where the last search stopped, a frame's length read from its
    * header), so that it may be asked at every chunk.
    */
  def resumes: Boolean = false
}
