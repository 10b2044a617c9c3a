package io.sparkgazette.spark
package source
package progress

import org.apache.spark.util.AccumulatorV2

/** The greatest UUID clock among the messages a query's tasks emitted as rows, 0 before any with
  * a UUID: an accumulator, so that tasks of micro-batches and of real-time batches alike hand
  * it to the driver with their results. Readers keep their greatest clock and add it once, when
  * a range or a batch ends, not once per row.
  */
private[source] final class NewestClock extends AccumulatorV2[Long, Long] {
  private var clock = 0L

  override def isZero: Boolean = clock == 0L
  override def copy(): NewestClock = { val c = new NewestClock; c.clock = clock; c }
  override def reset(): Unit = clock = 0L
  override def add(v: Long): Unit = if (v > clock) clock = v
  override def merge(other: AccumulatorV2[Long, Long]): Unit = add(other.value)
  override def value: Long = clock
}

private[source] object NewestClock {
  val NewestMessageAge = "newestMessageAgeMs"

  /** How old, at `nowMillis`, the newest message emitted is (by its clock, never below zero);
    * nothing before a message with a UUID was emitted.
    */
  def metrics(clock: Long, nowMillis: Long): Map[String, String] =
    if (clock == 0L) Map.empty
    else Map(NewestMessageAge -> JournalLag.ageMs(nowMillis, JournalLag.clockMillis(clock)).toString)
}
