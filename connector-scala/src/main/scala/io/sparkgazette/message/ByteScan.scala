package io.sparkgazette.message

/** Searches of message bytes eight at a time: reading a journal looks at every byte for a line's
  * end, and a byte at a time that costs more than the read (JSON strings: [[JsonStrings]]).
  *
  * Each word is loaded little-endian, so its lowest set flag is its first matching byte. The
  * flag tricks can also flag bytes after a true match (a borrow runs upward), never before one,
  * so the first flagged byte is always a true match.
  */
private[message] object ByteScan {
  private final val Ones = 0x0101010101010101L
  private final val Highs = 0x8080808080808080L

  // The high bit of each byte of `w` that is zero (and possibly of bytes above the first).
  @inline private def zeros(w: Long): Long = (w - Ones) & ~w & Highs

  @inline private def word(b: Array[Byte], i: Int): Long = LittleEndianWords.at(b, i)

  @inline private def first(flags: Long, i: Int): Int = i + (java.lang.Long.numberOfTrailingZeros(flags) >>> 3)

  /** The index of the first `c` in `b[from, until)`, or `until` if there is none. */
  def indexOf(b: Array[Byte], from: Int, until: Int, c: Byte): Int = {
    val pattern = Ones * (c & 0xff)
    var i = from
    while (i + 8 <= until) {
      val hit = zeros(word(b, i) ^ pattern)
      if (hit != 0) return first(hit, i)
      i += 8
    }
    while (i < until && b(i) != c) i += 1
    i
  }
}
