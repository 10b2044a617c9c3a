package io.sparkgazette.message

/** Just enough of protobuf's wire format to find one field in a serialized message without its
  * schema: every field is skipped by its wire type.
  */
private[message] object ProtoWire {
  val MaxFieldNumber: Int = (1 << 29) - 1

  private final class Malformed(msg: String) extends Exception(msg, null, false, false)

  /** The bounds of the last occurrence of length-delimited field `field` in `b[from, until)`
    * (protobuf's last-one-wins rule for scalar fields), None when absent, or what is wrong.
    */
  def lastBytesField(b: Array[Byte], from: Int, until: Int, field: Int): Either[String, Option[(Int, Int)]] =
    try {
      var i = from
      var found: Option[(Int, Int)] = None
      var groups = List.empty[Long]
      def varint(): Long = {
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
      def skip(n: Long): Unit = {
        if (n < 0 || n > until - i) throw new Malformed(s"field runs past the end of the message at byte ${i - from}")
        i += n.toInt
      }
      while (i < until) {
        val at = i - from
        val key = varint()
        val number = key >>> 3
        if (number == 0) throw new Malformed(s"field number 0 at byte $at")
        (key & 7).toInt match {
          case 0 => varint()
          case 1 => skip(8)
          case 2 =>
            val n = varint()
            if (number == field && groups.isEmpty) {
              skip(n)
              found = Some((i - n.toInt, i))
            } else skip(n)
          case 3 => groups = number :: groups
          case 4 =>
            if (groups.headOption.contains(number)) groups = groups.tail
            else throw new Malformed(s"unmatched end of group $number at byte $at")
          case 5 => skip(4)
          case w => throw new Malformed(s"invalid wire type $w at byte $at")
        }
        if (number == field && groups.isEmpty && (key & 7) != 2 && (key & 7) != 4)
          throw new Malformed(s"field $field has wire type ${key & 7}, not bytes, at byte $at")
      }
      if (groups.nonEmpty) throw new Malformed(s"unterminated group ${groups.head}")
      Right(found)
    } catch { case e: Malformed => Left(e.getMessage) }

  /** Appends a varint to `out`. */
  def writeVarint(out: java.io.ByteArrayOutputStream, value: Long): Unit = {
    var v = value
    while ((v & ~0x7fL) != 0) { out.write(((v & 0x7f) | 0x80).toInt); v >>>= 7 }
    out.write(v.toInt)
  }
}
