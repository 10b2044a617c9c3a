package io.sparkgazette.message

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

/** `text/csv`: one RFC 4180 record per message, its UUID in the first column.
  *
  * Parsing follows Go's `encoding/csv` reader as Gazette configures it: quoted fields may hold
  * commas, quotes (doubled) and newlines; a quote inside an unquoted field is an error; blank
  * lines are skipped; every record must have as many fields as the first one read.
  */
object CsvFraming extends Framing {

  override def contentType: String = Framing.Csv

  override private[message] def newUnpacker(): Unpacker = new Unpacker {
    private var width = -1

    override def unpack(b: Array[Byte], from: Int, until: Int, atEnd: Boolean, moreReady: Boolean): Unpacked =
      parse(b, from, until, atEnd) match {
        case Parsed.Record(length, recordFrom, recordUntil, fields, first) =>
          if (width == -1) width = fields
          if (fields != width) Unpacked.Malformed(length, s"record has $fields fields, expected $width")
          else if (first.isEmpty) Unpacked.Message(length, recordFrom, recordUntil, Uuid.Zero)
          else
            Uuid.parse(first) match {
              case Some(uuid) => Unpacked.Message(length, recordFrom, recordUntil, uuid)
              case None => Unpacked.Malformed(length, s"first column '$first' is not a UUID")
            }
        case Parsed.Blank(length) => Unpacked.Skip(length)
        case Parsed.Error(length, reason) => Unpacked.Malformed(length, reason)
        case Parsed.Incomplete => Unpacked.NeedMore
      }
  }

  /** The fields of one record without its line ending, e.g. a message's payload. */
  def fields(record: Array[Byte]): Either[String, IndexedSeq[String]] = {
    val withNewline = java.util.Arrays.copyOf(record, record.length + 1)
    withNewline(record.length) = '\n'
    parse(withNewline, 0, withNewline.length, atEnd = true, collect = true) match {
      case Parsed.Record(length, _, _, _, _) if length != withNewline.length => Left("more than one record")
      case r: Parsed.Record => Right(r.all)
      case Parsed.Blank(_) => Right(IndexedSeq(""))
      case Parsed.Error(_, reason) => Left(reason)
      case Parsed.Incomplete => Left("incomplete record")
    }
  }

  override def frame(payload: Array[Byte], uuid: UUID, out: ByteArrayOutputStream): Unit = {
    val record = stripLineEnd(payload)
    if (record.nonEmpty) fields(record).left.foreach(p => throw new MessageFormatException(s"invalid CSV record: $p"))
    out.write(uuid.toString.getBytes(UTF_8))
    if (record.nonEmpty) { out.write(','); out.write(record) }
    out.write('\n')
  }

  /** How many fields `payload` makes once framed, its UUID column included; None if it is not
    * a valid record.
    */
  def framedWidth(payload: Array[Byte]): Option[Int] = {
    val record = stripLineEnd(payload)
    if (record.isEmpty) Some(1) else fields(record).toOption.map(_.length + 1)
  }

  override def frameAck(uuid: UUID, like: Array[Byte], out: ByteArrayOutputStream): Unit = {
    val record = stripLineEnd(like)
    val width = if (record.isEmpty) 1 else fields(record).map(_.length + 1).getOrElse(1)
    out.write(uuid.toString.getBytes(UTF_8))
    for (_ <- 1 until width) out.write(',')
    out.write('\n')
  }

  private def stripLineEnd(b: Array[Byte]): Array[Byte] = {
    var n = b.length
    if (n > 0 && b(n - 1) == '\n') n -= 1
    if (n > 0 && b(n - 1) == '\r') n -= 1
    if (n == b.length) b else java.util.Arrays.copyOf(b, n)
  }

  private sealed trait Parsed
  private object Parsed {
    final case class Record(length: Int, from: Int, until: Int, fields: Int, first: String) extends Parsed {
      var all: IndexedSeq[String] = IndexedSeq.empty
    }
    final case class Blank(length: Int) extends Parsed
    final case class Error(length: Int, reason: String) extends Parsed
    case object Incomplete extends Parsed
  }

  // One record at b[from]: its length with skipped blank lines and line ending, the bounds of
  // the record itself, its field count and its first field.
  private def parse(b: Array[Byte], from: Int, until: Int, atEnd: Boolean, collect: Boolean = false): Parsed = {
    var i = from
    var blank = true
    while (blank) {
      if (i < until && b(i) == '\n') i += 1
      else if (i + 1 < until && b(i) == '\r' && b(i + 1) == '\n') i += 2
      else blank = false
    }
    if (i == until || (i + 1 == until && b(i) == '\r' && !atEnd))
      return if (atEnd && i > from) Parsed.Blank(i - from)
      else if (atEnd) Parsed.Blank(until - from) else Parsed.Incomplete
    val recordFrom = i

    // The rest of the line from `at` is skipped with an error, so reading resumes at a line.
    def error(at: Int, reason: String): Parsed = {
      var k = at
      while (k < until && b(k) != '\n') k += 1
      if (k < until) Parsed.Error(k + 1 - from, s"$reason (column ${at - recordFrom + 1} of the record)")
      else if (atEnd) Parsed.Error(until - from, s"$reason (column ${at - recordFrom + 1} of the record)")
      else Parsed.Incomplete
    }
    def truncated: Parsed =
      if (atEnd) Parsed.Error(until - from, "truncated message: no newline before the end of the data")
      else Parsed.Incomplete

    val all = if (collect) IndexedSeq.newBuilder[String] else null
    var fields = 0
    var first: String = null
    while (true) {
      val fieldFrom = i
      var value: String = null
      if (i < until && b(i) == '"') {
        val sb = new java.io.ByteArrayOutputStream()
        i += 1
        var closed = false
        while (!closed) {
          if (i >= until) return if (atEnd) error(fieldFrom, "unterminated quoted field") else Parsed.Incomplete
          if (b(i) == '"') {
            if (i + 1 >= until) return truncated
            if (b(i + 1) == '"') { sb.write('"'); i += 2 }
            else { closed = true; i += 1 }
          } else {
            if (b(i) == '\r' && i + 1 < until && b(i + 1) == '\n') i += 1 // \r\n inside quotes reads as \n
            sb.write(b(i)); i += 1
          }
        }
        if (i + 1 == until && b(i) == '\r') return truncated
        if (i < until && b(i) != ',' && b(i) != '\n' && !(b(i) == '\r' && b(i + 1) == '\n'))
          return error(i, "extraneous or missing \" in quoted field")
        if (fields == 0 || collect) value = new String(sb.toByteArray, UTF_8)
      } else {
        i = ByteScan.fieldStop(b, i, until)
        if (i < until && b(i) == '"') return error(i, "bare \" in non-quoted field")
        val end = if (i < until && b(i) == '\n' && i > fieldFrom && b(i - 1) == '\r') i - 1 else i
        if (fields == 0 || collect) value = new String(b, fieldFrom, end - fieldFrom, UTF_8)
      }
      fields += 1
      if (fields == 1) first = value
      if (collect) all += value
      if (i >= until) return truncated
      if (b(i) == '\r') i += 1 // only ever before \n here
      if (b(i) == '\n') {
        val recordUntil = if (b(i - 1) == '\r') i - 1 else i
        val r = Parsed.Record(i + 1 - from, recordFrom, recordUntil, fields, first)
        if (collect) r.all = all.result()
        return r
      }
      i += 1 // the comma
    }
    Parsed.Incomplete
  }
}
