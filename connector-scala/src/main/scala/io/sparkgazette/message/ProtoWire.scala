package io.sparkgazette.message

/** Just enough of protobuf's wire format to find or remove one field in a serialized message
  * without its schema: every field is skipped by its wire type.
  */
private[message] object ProtoWire {
  val MaxFieldNumber: Int = (1 << 29) - 1

  private final class Malformed(msg: String) extends Exception(msg, null, false, false)

  /** The bounds of the last occurrence of length-delimited field `field` in `b[from, until)`
    * (protobuf's last-one-wins rule for scalar fields), None when absent, or what is wrong.
    */
  def lastBytesField(b: Array[Byte], from: Int, until: Int, field: Int): Either[String, Option[(Int, Int)]] =
    try {
      val fields = new BytesFields(b, from, until, field)
      var found: Option[(Int, Int)] = None
      while (fields.next()) found = Some((fields.start, fields.end))
      Right(found)
    } catch { case e: Malformed => Left(e.getMessage) }

  /** `b[from, until)` without length-delimited field `field`, every occurrence of it (a field
    * set anew must leave no earlier value behind, which a reader that merges fields would see),
    * or what is wrong. Without the field, `b` itself when it is all of `b`.
    */
  def withoutBytesField(b: Array[Byte], from: Int, until: Int, field: Int): Either[String, Array[Byte]] =
    try {
      val fields = new BytesFields(b, from, until, field)
      var out: java.io.ByteArrayOutputStream = null
      var kept = from
      while (fields.next()) {
        if (out == null) out = new java.io.ByteArrayOutputStream(until - from)
        out.write(b, kept, fields.key - kept)
        kept = fields.end
      }
      if (out == null) Right(if (from == 0 && until == b.length) b else java.util.Arrays.copyOfRange(b, from, until))
      else {
        out.write(b, kept, until - kept)
        Right(out.toByteArray)
      }
    } catch { case e: Malformed => Left(e.getMessage) }

  // The occurrences of length-delimited field `field` in `b[from, until)`, outside groups (a
  // group's fields are its own), one by one; what is malformed is thrown as Malformed.
  private final class BytesFields(b: Array[Byte], from: Int, until: Int, field: Int) {
    private var i = from
    private var groups = List.empty[Long]

    /** Where the occurrence [[next]] found begins (its key), and its bytes. */
    var key, start, end = 0

    /** Moves to the next occurrence: false at the end of the message. */
    def next(): Boolean = {
      while (i < until) {
        val at = i
        val k = varint()
        val number = k >>> 3
        if (number == 0) throw new Malformed(s"field number 0 at byte ${at - from}")
        (k & 7).toInt match {
          case 0 => varint()
          case 1 => skip(8)
          case 2 =>
            val n = varint()
            skip(n)
            if (number == field && groups.isEmpty) {
              key = at; start = i - n.toInt; end = i
              return true
            }
          case 3 => groups = number :: groups
          case 4 =>
            if (groups.headOption.contains(number)) groups = groups.tail
            else throw new Malformed(s"unmatched end of group $number at byte ${at - from}")
          case 5 => skip(4)
          case w => throw new Malformed(s"invalid wire type $w at byte ${at - from}")
        }
        if (number == field && groups.isEmpty && (k & 7) != 4)
          throw new Malformed(s"field $field has wire type ${k & 7}, not bytes, at byte ${at - from}")
      }
      if (groups.nonEmpty) throw new Malformed(s"unterminated group ${groups.head}")
      false
    }

    private def varint(): Long = {
      var shift = 0
      var result = 0L
      while (true) {
        if (i >= until) throw new Malformed(s"truncated varint at byte ${i - from}")
        val c = b(i); i += 1
        result |= (c & 0x7fL) << shift
        if ((c & 0x80) == 0) return result
        shift += 7
        if (shift > 63) throw new Malformed(s"varint longer than 10 bytes at byte ${i - from}")
      }
      result
    }

    private def skip(n: Long): Unit = {
      if (n < 0 || n > until - i) throw new Malformed(s"field runs past the end of the message at byte ${i - from}")
      i += n.toInt
    }
  }

  /** Appends a varint to `out`. */
  def writeVarint(out: java.io.ByteArrayOutputStream, value: Long): Unit = {
    var v = value
    while ((v & ~0x7fL) != 0) { out.write(((v & 0x7f) | 0x80).toInt); v >>>= 7 }
    out.write(v.toInt)
  }
}
