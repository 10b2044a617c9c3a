package io.sparkgazette.message;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/** Eight bytes of an array as one little-endian long, for {@link ByteScan}'s word-at-a-time
 * searches. In Java because only a static final VarHandle, called with its exact signature, is a
 * constant the JIT compiles to a plain load; Scala 2 can declare neither.
 */
final class LittleEndianWords {
  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private LittleEndianWords() {}

  /** The bytes {@code b[i, i + 8)}, the first the least significant. */
  static long at(byte[] b, int i) {
    return (long) LONGS.get(b, i);
  }
}
