package io.sparkgazette.spark
package sink
package metrics

import io.sparkgazette.spark.errors.GazetteErrors
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomSumMetric, CustomTaskMetric}

/** The sink's metrics: summed over a write's tasks (and its driver, where Spark takes driver
  * metrics) in the SQL tab, and per trigger in a stream's progress.
  */
private[sink] object SinkMetrics {
  val RowsWritten = "rowsWritten"
  val BytesAppended = "bytesAppended"
  val Appends = "appends"
  val AckIntentsWritten = "ackIntentsWritten"
  val AppendWaitMs = "appendWaitMs"
  val CommitMs = "commitMs"
  val BytesStaged = "bytesStaged"

  private val descriptions = Seq(
    RowsWritten -> "rows written",
    BytesAppended -> "bytes appended to journals",
    Appends -> "appends to journals",
    AckIntentsWritten -> "ACK intents appended",
    AppendWaitMs -> "time tasks waited for appends (ms)",
    CommitMs -> "time the driver took to commit (ms)",
    BytesStaged -> "bytes staged"
  )

  /** The metrics' names, in the order of [[SinkCounts.values]]. */
  val Names: IndexedSeq[String] = descriptions.map(_._1).toIndexedSeq

  def index(name: String): Int = Names.indexOf(name)

  /** How the SQL tab names a metric. */
  def describe(name: String): String = descriptions.toMap.apply(name)

  def supported: Array[CustomMetric] = Array(
    new RowsWrittenMetric,
    new BytesAppendedMetric,
    new AppendsMetric,
    new AckIntentsWrittenMetric,
    new AppendWaitMsMetric,
    new CommitMsMetric,
    new BytesStagedMetric
  )

  /** Spark's task (or driver) metrics of `counts`: those not zero (Spark merges them by name, at
    * a cost per metric, every 100 rows; one never reported stays at zero).
    */
  def task(counts: SinkCounts): Array[CustomTaskMetric] =
    Names.indices.filter(counts.values(_) != 0).map(i => metric(Names(i), counts.values(i))).toArray

  private def metric(n: String, v: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = n
    override def value(): Long = v
  }

  /** Spark instantiates metrics by class name, so each needs a class with a no-argument constructor. */
  abstract class Metric(metric: String) extends CustomSumMetric {
    override def name(): String = metric
    override def description(): String = describe(metric)
  }
  final class RowsWrittenMetric extends Metric(RowsWritten)
  final class BytesAppendedMetric extends Metric(BytesAppended)
  final class AppendsMetric extends Metric(Appends)
  final class AckIntentsWrittenMetric extends Metric(AckIntentsWritten)
  final class AppendWaitMsMetric extends Metric(AppendWaitMs)
  final class CommitMsMetric extends Metric(CommitMs)
  final class BytesStagedMetric extends Metric(BytesStaged)
}

/** Values of the sink's metrics, in the order of [[SinkMetrics.Names]]. */
private[sink] final case class SinkCounts(values: Vector[Long]) {
  def +(other: SinkCounts): SinkCounts = SinkCounts(values.zip(other.values).map { case (a, b) => a + b })

  def -(other: SinkCounts): SinkCounts = SinkCounts(values.zip(other.values).map { case (a, b) => a - b })

  def apply(name: String): Long = values(SinkMetrics.index(name))

  def toMap: Map[String, Long] = SinkMetrics.Names.zip(values).toMap
}

private[sink] object SinkCounts {
  val Zero: SinkCounts = SinkCounts(Vector.fill(SinkMetrics.Names.size)(0L))

  def of(counts: (String, Long)*): SinkCounts = {
    val known = counts.toMap
    known.keys.find(SinkMetrics.index(_) < 0).foreach(n => throw GazetteErrors.internal(s"no sink metric $n"))
    SinkCounts(SinkMetrics.Names.map(known.getOrElse(_, 0L)).toVector)
  }

  /** The sum of `all`. */
  def sum(all: Iterable[SinkCounts]): SinkCounts = all.foldLeft(Zero)(_ + _)
}
