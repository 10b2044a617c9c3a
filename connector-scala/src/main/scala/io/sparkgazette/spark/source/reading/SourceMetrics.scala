package io.sparkgazette.spark
package source
package reading

import io.sparkgazette.spark.errors.GazetteErrors
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomSumMetric, CustomTaskMetric}

/** Task metrics of the source, summed over tasks and shown in the SQL UI. */
private[source] object SourceMetrics {
  val BytesRead = "bytesRead"
  val MessagesEmitted = "messagesEmitted"
  val DuplicatesDropped = "duplicatesDropped"
  val RolledBackMessages = "rolledBackMessages"
  val ReplayedBytes = "replayedBytes"
  val MalformedSkipped = "malformedMessagesSkipped"
  val LostBytes = "lostBytes"
  val RebuiltBytes = "rebuiltBytes"
  val BytesFromStore = "bytesReadFromStore"
  val BytesFromBrokers = "bytesReadFromBrokers"
  val StoreFallbacks = "storeFallbacks"
  val TransactionsAcrossPieces = "transactionsAcrossPieces"

  private val descriptions = Seq(
    BytesRead -> "bytes read from journals",
    MessagesEmitted -> "messages emitted",
    DuplicatesDropped -> "duplicate messages dropped",
    RolledBackMessages -> "rolled-back messages discarded",
    ReplayedBytes -> "bytes re-read to replay transactions",
    MalformedSkipped -> "malformed messages skipped",
    LostBytes -> "bytes lost to retention and skipped",
    RebuiltBytes -> "bytes re-read to rebuild a state no earlier task saved",
    BytesFromStore -> "bytes read straight from fragment stores",
    BytesFromBrokers -> "bytes read through brokers",
    StoreFallbacks -> "fragments a broker served because the store failed them, or failed lately",
    TransactionsAcrossPieces -> "transactions open where a task's piece of a split range began"
  )

  def supported: Array[CustomMetric] = Array(
    new BytesReadMetric,
    new MessagesEmittedMetric,
    new DuplicatesDroppedMetric,
    new RolledBackMessagesMetric,
    new ReplayedBytesMetric,
    new MalformedSkippedMetric,
    new LostBytesMetric,
    new RebuiltBytesMetric,
    new BytesFromStoreMetric,
    new BytesFromBrokersMetric,
    new StoreFallbacksMetric,
    new TransactionsAcrossPiecesMetric
  )

  /** The metrics' names, in the order readers keep their values. */
  val Names: IndexedSeq[String] = descriptions.map(_._1).toIndexedSeq

  /** Values in the order of [[Names]]. Spark asks for them every 100 rows and merges them by
    * name, at a cost per metric: only those not zero are reported. Each is a count that only
    * grows within a task, and one never reported stays at zero.
    */
  def task(values: Array[Long]): Array[CustomTaskMetric] = {
    if (values.length != Names.size)
      throw GazetteErrors.internal(s"${values.length} task metric values for ${Names.size} metrics")
    var n = 0
    var i = 0
    while (i < values.length) { if (values(i) != 0) n += 1; i += 1 }
    val out = new Array[CustomTaskMetric](n)
    n = 0; i = 0
    while (i < values.length) {
      if (values(i) != 0) { out(n) = metric(Names(i), values(i)); n += 1 }
      i += 1
    }
    out
  }

  private def metric(n: String, v: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = n
    override def value(): Long = v
  }

  /** Spark instantiates metrics by class name, so each needs a class with a no-argument constructor. */
  abstract class Metric(metric: String) extends CustomSumMetric {
    override def name(): String = metric
    override def description(): String = descriptions.toMap.apply(metric)
  }
  final class BytesReadMetric extends Metric(BytesRead)
  final class MessagesEmittedMetric extends Metric(MessagesEmitted)
  final class DuplicatesDroppedMetric extends Metric(DuplicatesDropped)
  final class RolledBackMessagesMetric extends Metric(RolledBackMessages)
  final class ReplayedBytesMetric extends Metric(ReplayedBytes)
  final class MalformedSkippedMetric extends Metric(MalformedSkipped)
  final class LostBytesMetric extends Metric(LostBytes)
  final class RebuiltBytesMetric extends Metric(RebuiltBytes)
  final class BytesFromStoreMetric extends Metric(BytesFromStore)
  final class BytesFromBrokersMetric extends Metric(BytesFromBrokers)
  final class StoreFallbacksMetric extends Metric(StoreFallbacks)
  final class TransactionsAcrossPiecesMetric extends Metric(TransactionsAcrossPieces)
}
