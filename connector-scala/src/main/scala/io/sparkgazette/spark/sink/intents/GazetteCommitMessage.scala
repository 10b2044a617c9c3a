package io.sparkgazette.spark
package sink
package intents

import io.sparkgazette.message._
import io.sparkgazette.spark.sink.metrics.TaskCounts
import org.apache.spark.sql.connector.write.WriterCommitMessage

/** What a task attempt reports when it commits: the ACK intents that make its messages
  * visible (none for at-least-once writes, or for an epoch already recorded), and how many
  * rows it held back from journals the sink cannot write, for the driver to refuse; whether it
  * is its partition's first attempt (where not, an earlier one may have appends in flight); a
  * real-time task, the clock its own producer reached, which the next batch's continues above;
  * and what the task did, for the sink's metrics.
  */
private[sink] final case class GazetteCommitMessage(producer: String, intents: Seq[AckIntent],
    rollbacks: Seq[AckIntent],
    unwritable: Map[String, Long] = Map.empty, staged: Seq[StagedRun] = Nil, lastClock: Long = 0L,
    partition: Int = 0, firstAttempt: Boolean = true, counts: TaskCounts = TaskCounts.Zero)
    extends WriterCommitMessage
