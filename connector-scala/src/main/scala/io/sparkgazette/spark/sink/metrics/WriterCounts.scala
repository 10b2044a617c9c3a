package io.sparkgazette.spark
package sink
package metrics

import org.apache.spark.sql.connector.metric.CustomTaskMetric

/** A writer's counts. Spark takes a task's metrics for the last time before the task commits,
  * and a writer appends most of its bytes in its commit: what it does after Spark's last look
  * goes to the driver in its commit message ([[TaskCounts]]), which reports it where Spark lets
  * it (see [[SinkProgress]], and the write's driver metrics).
  */
private[sink] final class WriterCounts {
  var rows = 0L
  var bytesAppended = 0L
  var appends = 0L
  var appendWaitNanos = 0L
  var bytesStaged = 0L
  private var reported = SinkCounts.Zero
  private var committed = false

  /** Counts one append of `bytes`, which took `nanos`. */
  def appended(bytes: Long, nanos: Long): Unit = { bytesAppended += bytes; appends += 1; appendWaitNanos += nanos }

  def now: SinkCounts = SinkCounts.of(
    SinkMetrics.RowsWritten -> rows,
    SinkMetrics.BytesAppended -> bytesAppended,
    SinkMetrics.Appends -> appends,
    SinkMetrics.AppendWaitMs -> appendWaitNanos / 1000000,
    SinkMetrics.BytesStaged -> bytesStaged
  )

  /** What Spark shows of the task: its counts so far, until it commits. */
  def report(): Array[CustomTaskMetric] = {
    if (!committed) reported = now
    SinkMetrics.task(reported)
  }

  /** The task's counts as it commits, and what of them Spark has not seen. */
  def commit(): TaskCounts = {
    committed = true
    val all = now
    TaskCounts(all, all - reported)
  }
}

/** A task's counts at its commit (`total`), and the part of them Spark did not take as task
  * metrics (`unreported`).
  */
private[sink] final case class TaskCounts(total: SinkCounts, unreported: SinkCounts)

private[sink] object TaskCounts {
  val Zero: TaskCounts = TaskCounts(SinkCounts.Zero, SinkCounts.Zero)
}

/** What one epoch's commit counted: its tasks' and the driver's own work. */
private[sink] final case class CommitCounts(tasks: TaskCounts, driver: SinkCounts) {

  /** All the epoch did, for a stream's progress. */
  def total: SinkCounts = tasks.total + driver

  /** What Spark's task metrics did not show, for the write's driver metrics. */
  def unreported: SinkCounts = tasks.unreported + driver
}

private[sink] object CommitCounts {
  def of(tasks: Seq[TaskCounts], driver: SinkCounts): CommitCounts =
    CommitCounts(TaskCounts(SinkCounts.sum(tasks.map(_.total)), SinkCounts.sum(tasks.map(_.unreported))), driver)
}
