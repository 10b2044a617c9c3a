package io.sparkgazette.spark
package sink
package staging

/** How large a task's run in a journal may grow before it is staged rather than appended:
  * the runs a task appends itself, all of an epoch's tasks together, must fit in half a reader's
  * ring, in messages (`readerRingSize`) and in bytes (the source's default ring of 64 MiB).
  */
private[sink] final case class StagingThreshold(messages: Long, bytes: Long)

private[sink] object StagingThreshold {
  private val ReaderRingBytes = 64L << 20

  def apply(readerRingSize: Int, partitions: Int): StagingThreshold = {
    val share = 2L * math.max(partitions, 1)
    StagingThreshold(math.max(1L, readerRingSize / share), math.max(64L << 10, ReaderRingBytes / share))
  }
}
