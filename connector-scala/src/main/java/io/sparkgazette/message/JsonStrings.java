package io.sparkgazette.message;

import java.lang.reflect.Field;
import java.nio.ByteOrder;

import sun.misc.Unsafe;

/**
 * Skips the plain bytes of a JSON string's contents eight at a time: most of an ndjson message's
 * bytes are inside strings, and both framing a message and reading one pass over each string.
 * Words are read with Unsafe, an intrinsic wherever it is called from: a VarHandle's chain of
 * calls is inlined only within the JIT's inlining depth, which the scanners' callers exceed.
 */
final class JsonStrings {
  private JsonStrings() {}

  private static final Unsafe UNSAFE;
  private static final long BASE;
  private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

  static {
    try {
      Field f = Unsafe.class.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      UNSAFE = (Unsafe) f.get(null);
      BASE = UNSAFE.arrayBaseOffset(byte[].class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
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
    int i = from;
    while (i + 8 <= until) {
      long w = UNSAFE.getLong(b, BASE + i);
      if (!LITTLE_ENDIAN) w = Long.reverseBytes(w);
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
