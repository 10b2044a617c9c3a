package io.sparkgazette.message

import java.lang.invoke.{MethodHandles, VarHandle}
import java.nio.ByteOrder

/** Skips the plain bytes of a JSON string's contents eight at a time: most of an ndjson
  * message's bytes are inside strings, and both framing a message and reading one pass over
  * each string.
  */
private[message] object JsonStrings {
  private val Words: VarHandle = MethodHandles.byteArrayViewVarHandle(classOf[Array[Long]], ByteOrder.LITTLE_ENDIAN)
  private final val Ones = 0x0101010101010101L
  private final val Highs = 0x8080808080808080L
  private final val Quotes = 0x2222222222222222L
  private final val Backslashes = 0x5c5c5c5c5c5c5c5cL
  private final val Spaces = 0x2020202020202020L

  /** The index of the first byte in `b[from, until)` that is a quote, a backslash or a control
    * character (below 0x20), or `until` when there is none (`from` when `from` > `until`).
    */
  def plainEnd(b: Array[Byte], from: Int, until: Int): Int = {
    var i = from
    while (i + 8 <= until) {
      val w: Long = Words.get(b, i)
      val q = w ^ Quotes
      val s = w ^ Backslashes
      // Each term marks bytes that are zero (q, s) or below 0x20 (w). A borrow can only mark
      // bytes above a marked one, so the lowest mark (the first byte, little-endian) is exact.
      val marks = ((q - Ones) & ~q | (s - Ones) & ~s | (w - Spaces) & ~w) & Highs
      if (marks != 0) return i + (java.lang.Long.numberOfTrailingZeros(marks) >>> 3)
      i += 8
    }
    while (i < until && { val c = b(i); c != '"' && c != '\\' && (c & 0xff) >= 0x20 }) i += 1
    i
  }
}
