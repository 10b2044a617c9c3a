package io.sparkgazette.message

/** Searches of message bytes eight at a time: reading a journal looks at every byte for a line's
  * end, framing or reading ndjson at every byte of its strings, and a byte at a time that costs
  * more than the read.
  *
  * Each word is loaded little-endian, so its lowest set flag is its first matching byte. The
  * flag tricks can also flag bytes after a true match (a borrow runs upward), never before one,
  * so the first flagged byte is always a true match.
  */
private[message] object ByteScan {
  private final val Ones = 0x0101010101010101L
  private final val Highs = 0x8080808080808080L
  private final val Quotes = Ones * '"'
  private final val Backslashes = Ones * '\\'
  private final val Spaces = Ones * 0x20
  private final val Commas = Ones * ','
  private final val Newlines = Ones * '\n'

  // The high bit of each byte of `w` that is zero (and possibly of bytes above the first).
  @inline private def zeros(w: Long): Long = (w - Ones) & ~w & Highs

  @inline private def word(b: Array[Byte], i: Int): Long = LittleEndianWords.at(b, i)

  @inline private def first(flags: Long, i: Int): Int = i + (java.lang.Long.numberOfTrailingZeros(flags) >>> 3)

  /** The index of the first `c` in `b[from, until)`, or `until` if there is none. */
  def indexOf(b: Array[Byte], from: Int, until: Int, c: Byte): Int = {
    val pattern = Ones * (c & 0xff)
    var i = from
    // Two words a round, as stringStop: their tests are independent.
    while (until - i >= 16) {
      val hit = zeros(word(b, i) ^ pattern)
      val next = zeros(word(b, i + 8) ^ pattern)
      if ((hit | next) != 0) return if (hit != 0) first(hit, i) else first(next, i + 8)
      i += 16
    }
    if (until - i >= 8) {
      val hit = zeros(word(b, i) ^ pattern)
      if (hit != 0) return first(hit, i)
      i += 8
    }
    while (i < until && b(i) != c) i += 1
    i
  }

  /** The index of the first byte in `b[from, until)` that ends an unquoted CSV field's plain run:
    * a comma, a newline or a quote; `until` if there is none.
    */
  def fieldStop(b: Array[Byte], from: Int, until: Int): Int = {
    var i = from
    while (until - i >= 8) {
      val w = word(b, i)
      val hit = zeros(w ^ Commas) | zeros(w ^ Newlines) | zeros(w ^ Quotes)
      if (hit != 0) return first(hit, i)
      i += 8
    }
    while (i < until && { val c = b(i); c != ',' && c != '\n' && c != '"' }) i += 1
    i
  }

  // Bytes below 0x20 borrow from `w - 0x20...`; bytes of 0x80 and more are masked by `~w`, unless
  // `high` (Highs or 0) keeps them.
  @inline private def stops(w: Long, high: Long): Long =
    zeros(w ^ Quotes) | zeros(w ^ Backslashes) | (((w - Spaces) & ~w | w & high) & Highs)

  /** The index of the first byte in `b[from, until)` that ends a JSON string's plain run: a
    * quote, a backslash or a control character (below 0x20), and when `orHigh` a byte that is not
    * ASCII, so that a caller learns of one without a second pass; `until` if there is none
    * (`from` when `from` > `until`).
    */
  def stringStop(b: Array[Byte], from: Int, until: Int, orHigh: Boolean = false): Int = {
    if (until > b.length) throw new IndexOutOfBoundsException(s"until $until is past the end (${b.length})")
    val high = if (orHigh) Highs else 0L
    var i = from
    // Two words a round: their tests are independent, so the processor runs them side by side.
    while (until - i >= 16) {
      val hit = stops(word(b, i), high)
      val next = stops(word(b, i + 8), high)
      if ((hit | next) != 0) return if (hit != 0) first(hit, i) else first(next, i + 8)
      i += 16
    }
    if (until - i >= 8) {
      val hit = stops(word(b, i), high)
      if (hit != 0) return first(hit, i)
      i += 8
    }
    val limit = if (orHigh) 0x80 else 0x100
    while (i < until && { val c = b(i) & 0xff; c != '"' && c != '\\' && c >= 0x20 && c < limit }) i += 1
    i
  }
}
