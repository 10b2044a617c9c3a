package io.sparkgazette.spark
package source
package realtime

/** Bytes in use out of `limit`, shared by threads: one waits for room while others hold bytes,
  * and an amount larger than `limit` is taken alone, so that nothing waits for ever.
  */
private[source] final class ByteBudget(limit: Long) {
  private var inUse = 0L

  /** Takes `n` bytes, once they fit (or nothing else is held); interruptible. */
  def acquire(n: Long): Unit = synchronized {
    while (inUse > 0 && inUse + n > limit) wait()
    inUse += n
  }

  def release(n: Long): Unit = synchronized { inUse -= n; notifyAll() }

  def used: Long = synchronized(inUse)
}
