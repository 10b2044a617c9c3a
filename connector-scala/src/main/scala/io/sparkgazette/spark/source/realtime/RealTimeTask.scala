package io.sparkgazette.spark
package source
package realtime

import io.sparkgazette.message.ProducerState
import io.sparkgazette.spark.source.offsets.{JournalPosition, JournalRange}
import org.apache.spark.sql.connector.read.InputPartition
import org.apache.spark.sql.connector.read.streaming.PartitionOffset

/** A journal a real-time task reads from `range.start` on, with no end: `producers` are the
  * producers' states there when the batch before was a real-time one (its offset carries them);
  * None when they are to be found as a micro-batch's range finds them (`range.base`, a saved
  * state, or one rebuilt from an earlier state or from the journal's origin).
  */
private[source] final case class RealTimeJournal(range: JournalRange, producers: Option[Seq[ProducerState]])

/** One real-time task's journals, read at once for the whole batch. `carried`: positions (and
  * states) of journals no task reads this batch (suspended ones whose states would have to be
  * rebuilt from their bytes), which this task hands back unchanged so that the batch's end offset
  * still holds them.
  */
private[source] final case class RealTimeTask(journals: Seq[RealTimeJournal],
    carried: JournalsReached = JournalsReached.Empty)
    extends InputPartition

private[source] object RealTimeTask {

  /** `reads` dealt in turn to at most `partitions` tasks (at least one, which may read nothing);
    * the first carries `carried`.
    */
  def spread(reads: Seq[RealTimeJournal], carried: JournalsReached, partitions: Int): Seq[RealTimeTask] = {
    val n = math.max(1, math.min(partitions, reads.size))
    (0 until n).map { i =>
      RealTimeTask(reads.zipWithIndex.collect { case (r, k) if k % n == i => r },
        if (i == 0) carried else JournalsReached.Empty)
    }
  }
}

/** Where a real-time task's journals stand when its batch ends: the end of the last message it
  * took from each, and the producers' states there (none read uncommitted); and the task's
  * metrics by name (see [[SourceMetrics]]), which the driver reports with the batch's progress.
  */
private[source] final case class JournalsReached(positions: Map[String, JournalPosition],
    producers: Map[String, Seq[ProducerState]], metrics: Map[String, Long] = Map.empty)
    extends PartitionOffset {
  def ++(other: JournalsReached): JournalsReached =
    JournalsReached(
      positions ++ other.positions,
      producers ++ other.producers,
      (metrics.keySet ++ other.metrics.keySet).map(k =>
        k -> (metrics.getOrElse(k, 0L) + other.metrics.getOrElse(k, 0L)))
        .toMap
    )
}

private[source] object JournalsReached {
  val Empty: JournalsReached = JournalsReached(Map.empty, Map.empty)
}
