package io.sparkgazette.message;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Skips the plain bytes of a JSON string's contents eight at a time: most of an ndjson message's
 * bytes are inside strings, and both framing a message and reading one pass over each string.
 * Java, because the JIT treats a VarHandle as a constant only in a static final field, which
 * Scala does not emit.
 */
final class JsonStrings {
  private JsonStrings() {}

  private static final VarHandle WORDS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long ONES = 0x0101010101010101L;
  private static final long HIGHS = 0x8080808080808080L;
  private static final long QUOTES = 0x2222222222222222L;
  private static final long BACKSLASHES = 0x5c5c5c5c5c5c5c5cL;
  private static final long SPACES = 0x2020202020202020L;

  /**
   * The index of the first byte in {@code b[from, until)} that is a quote, a backslash or a
   * control character (below 0x20), or {@code until} when there is none ({@code from} when
   * {@code from > until}).
   */
  static int plainEnd(byte[] b, int from, int until) {
    if (until > b.length) throw new IndexOutOfBoundsException("until " + until + " is past the end (" + b.length + ")");
    int i = from;
    while (i + 8 <= until) {
      long w = (long) WORDS.get(b, i);
      long q = w ^ QUOTES;
      long s = w ^ BACKSLASHES;
      // Each term marks bytes that are zero (q, s) or below 0x20 (w). A borrow can only mark
      // bytes above a marked one, so the lowest mark (the first byte, little-endian) is exact.
      long marks = ((q - ONES) & ~q | (s - ONES) & ~s | (w - SPACES) & ~w) & HIGHS;
      if (marks != 0) return i + (Long.numberOfTrailingZeros(marks) >>> 3);
      i += 8;
    }
    while (i < until) {
      byte c = b[i];
      if (c == '"' || c == '\\' || (c & 0xff) < 0x20) break;
      i++;
    }
    return i;
  }
}
