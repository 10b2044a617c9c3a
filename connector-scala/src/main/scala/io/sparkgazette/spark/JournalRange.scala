package io.sparkgazette.spark

import scala.concurrent.duration.FiniteDuration

import io.sparkgazette.client.ClientConfig
import org.apache.spark.sql.connector.read.InputPartition

/** One task's work: the messages of `journal` that begin in `[start, end)`. */
final case class JournalRange(journal: String, contentType: String, labels: Map[String, Seq[String]], start: Long, end: Long)
    extends InputPartition

/** What every reader of a scan needs besides its range; `stateDir` is set for streaming
  * queries, whose sequencer state crosses batches.
  */
final case class ReaderConfig(
    client: ClientConfig,
    readCommitted: Boolean,
    failOnDataLoss: Boolean,
    failOnMalformed: Boolean,
    uuidPointer: String,
    uuidField: Int,
    producerPruneHorizon: FiniteDuration,
    includeLabels: Boolean,
    sequencerRingSize: Int,
    sequencerRingBytes: Long,
    stateDir: Option[String],
    hadoopConf: SerializableConfiguration
)

object ReaderConfig {
  def apply(o: SourceOptions, stateDir: Option[String], hadoopConf: SerializableConfiguration): ReaderConfig =
    ReaderConfig(ClientConfig(o.broker).copy(fragmentRoot = o.fragmentRoot), o.readCommitted, o.failOnDataLoss,
      o.failOnMalformed, o.uuidPointer, o.uuidField, o.producerPruneHorizon, o.includeLabels, o.sequencerRingSize,
      o.sequencerRingBytes, stateDir, hadoopConf)
}
