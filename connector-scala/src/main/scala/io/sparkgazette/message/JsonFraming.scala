package io.sparkgazette.message

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.{US_ASCII, UTF_8}
import java.util.UUID

/** `application/x-ndjson`: one JSON document per line, its UUID the string at `uuidPointer`.
  *
  * Every line must be one well-formed JSON value (Gazette's decoder rejects anything else); the
  * UUID is found by scanning, without building the document. With `withMembers`, a message that is
  * an object comes with where its members lie ([[RawMessage.members]]), found by the same check:
  * a parser that needs a few of them can skip the rest without reading them again.
  */
final class JsonFraming(val uuidPointer: String, withMembers: Boolean = false) extends Framing {
  private val scanner = new JsonPointerScanner(uuidPointer)

  override def contentType: String = Framing.JsonLines

  override def toString: String = s"JsonFraming($uuidPointer)"

  override private[message] def newUnpacker(): Unpacker = newUnpacker(validate = true)

  override private[message] def newUnpacker(validate: Boolean): Unpacker = new Unpacker {
    override def resumes: Boolean = true
    // How much of the current line has been searched for its newline, so that long lines
    // arriving in many chunks are scanned once.
    private var scanned = 0
    // The last line's length: a line as long is rarely whole in fewer bytes, and checking a part
    // of it as it is searched for would be checking it twice.
    private var last = 0
    private val found = if (withMembers && validate) new JsonSyntax.Members else null

    override def restart(): Unit = scanned = 0

    override def unpack(b: Array[Byte], from: Int, until: Int, atEnd: Boolean, moreReady: Boolean): Unpacked = {
      // Most lines are well-formed and whole: checked as their end is searched for, in one pass.
      // Any other line (or one whose end is not here yet) is searched, then checked. A line
      // shorter than the last is rarely whole: where more bytes are ready it waits for them, not
      // to be searched now and checked once whole, over its bytes twice.
      if (scanned == 0 && validate && until - from < last && moreReady) return Unpacked.NeedMore
      val checked =
        if (scanned == 0 && validate && until - from >= last) JsonSyntax.lineEnd(b, from, until, found) else -1
      if (checked >= 0) { last = checked - from; return message(b, from, checked) }
      val i = ByteScan.indexOf(b, from + scanned, until, '\n')
      if (i == until) {
        // Reported malformed, the bytes are consumed: the next line's search starts afresh.
        if (atEnd) {
          scanned = 0; Unpacked.Malformed(until - from, "truncated message: no newline before the end of the data")
        } else { scanned = i - from; Unpacked.NeedMore }
      } else {
        scanned = 0
        last = i - from
        // Not validating, the line is taken as well-formed: its UUID is found as in one that is.
        if (!validate) message(b, from, i)
        else JsonSyntax.checkLine(b, from, i, found) match {
          case Left(problem) => Unpacked.Malformed(i + 1 - from, s"invalid JSON: $problem")
          case Right(_) => message(b, from, i)
        }
      }
    }

    // The well-formed line `b[from, end)` and its newline, with its UUID.
    private def message(b: Array[Byte], from: Int, end: Int): Unpacked = {
      val length = end + 1 - from
      val spans = if (found != null && found.objectChecked) found.relativeTo(from) else null
      // Most UUIDs are canonical and unescaped: read from the bytes, without a String.
      val at = scanner.stringBounds(b, from, end)
      val (start, stop) = ((at >>> 32).toInt, at.toInt)
      if (at == JsonPointerScanner.Absent || (at >= 0 && start == stop))
        Unpacked.Message(length, from, end, Uuid.Zero, spans)
      else {
        val uuid = if (at >= 0) Uuid.canonical(b, start, stop) else null
        if (uuid != null) Unpacked.Message(length, from, end, uuid, spans) else uuidOf(b, from, end, length, spans)
      }
    }

    // Every other case, with the reason when it is malformed. Not validating, a line that is not
    // JSON has no UUID to find: it is taken for a message outside transactions, for whoever
    // parses it to judge.
    private def uuidOf(b: Array[Byte], from: Int, until: Int, length: Int, spans: Array[Int]): Unpacked =
      scanner.find(b, from, until) match {
        case Left(_) if !validate => Unpacked.Message(length, from, until, Uuid.Zero)
        case Left(problem) => Unpacked.Malformed(length, s"invalid JSON: $problem")
        case Right(None) => Unpacked.Message(length, from, until, Uuid.Zero, spans)
        case Right(Some(text)) =>
          if (text.isEmpty) Unpacked.Message(length, from, until, Uuid.Zero, spans)
          else
            Uuid.parse(text) match {
              case Some(uuid) => Unpacked.Message(length, from, until, uuid, spans)
              case None => Unpacked.Malformed(length, s"'$text' at $uuidPointer is not a UUID")
            }
      }
  }

  override def frame(payload: Array[Byte], uuid: UUID, out: ByteArrayOutputStream): Unit = {
    val lineBreaks = JsonSyntax.checkLine(payload, 0, payload.length) match {
      case Right(breaks) => breaks
      case Left(p) => throw new MessageFormatException(s"invalid JSON: $p")
    }
    // Hex digits and dashes: nothing to escape.
    val text = uuid.toString.getBytes(US_ASCII)
    scanner.place(payload, 0, payload.length) match {
      case Left(problem) => throw new MessageFormatException(s"cannot set the UUID at $uuidPointer: $problem")
      case Right(JsonPointerScanner.Insert(depth, at, empty)) =>
        val (before, after) = members(depth)
        write(payload, 0, at, out, lineBreaks)
        out.write(before)
        out.write(text)
        out.write(after)
        if (!empty) out.write(',')
        write(payload, at, payload.length, out, lineBreaks)
      // A copied message comes with its input's UUID; Gazette's Publisher, too, sets a message's
      // UUID whatever it held.
      case Right(JsonPointerScanner.Replace(start, end)) =>
        write(payload, 0, start, out, lineBreaks)
        out.write('"')
        out.write(text)
        out.write('"')
        write(payload, end, payload.length, out, lineBreaks)
    }
    out.write('\n')
  }

  // The member that holds the UUID, around the UUID's text, by the depth at which the pointer's
  // path leaves the document: nest() wraps the innermost missing member in braces; inside an
  // existing object only the member itself is written. Built once per depth, not per message.
  private val members: IndexedSeq[(Array[Byte], Array[Byte])] = (0 to scanner.pathLength).map { depth =>
    val member = scanner.nest(depth, "\"\u0000\"")
    val inner = member.substring(1, member.length - 1)
    val hole = inner.indexOf('\u0000')
    (inner.substring(0, hole).getBytes(UTF_8), inner.substring(hole + 1).getBytes(UTF_8))
  }

  private def write(b: Array[Byte], from: Int, until: Int, out: ByteArrayOutputStream, lineBreaks: Boolean): Unit =
    if (lineBreaks) writeOneLine(b, from, until, out) else out.write(b, from, until - from)

  override def frameAck(uuid: UUID, like: Array[Byte], out: ByteArrayOutputStream): Unit =
    frame("{}".getBytes(UTF_8), uuid, out)

  // A valid JSON document has newlines only as whitespace (strings cannot hold raw control
  // characters), so replacing them keeps the document and its one-line framing.
  private def writeOneLine(b: Array[Byte], from: Int, until: Int, out: ByteArrayOutputStream): Unit = {
    var start = from
    var i = from
    while (i < until) {
      if (b(i) == '\n' || b(i) == '\r') {
        out.write(b, start, i - start)
        out.write(' ')
        start = i + 1
      }
      i += 1
    }
    out.write(b, start, until - start)
  }
}
