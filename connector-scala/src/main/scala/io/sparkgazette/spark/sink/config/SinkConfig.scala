package io.sparkgazette.spark
package sink
package config

import io.sparkgazette.client.ClientConfig
import io.sparkgazette.spark.hadoop.SerializableConfiguration
import org.apache.spark.broadcast.Broadcast

/** The journals an epoch writes to, resolved on the driver, and how rows map to them;
  * `unwritable` holds why the sink cannot write some of them (their content type).
  */
private[sink] final case class SinkTargets(journals: IndexedSeq[String], contentTypes: Map[String, String],
    mapping: String,
    unwritable: Map[String, String] = Map.empty, csvWidths: Map[String, Int] = Map.empty,
    revisions: Map[String, Long] = Map.empty) {

  /** These, with what is known of the journals of `others` too (their journals not added). */
  def knowing(others: SinkTargets): SinkTargets =
    copy(
      contentTypes = contentTypes ++ others.contentTypes,
      unwritable = unwritable ++ others.unwritable,
      csvWidths = csvWidths ++ others.csvWidths,
      revisions = revisions ++ others.revisions
    )
}

/** Everything a writer needs: the sink's options, its input columns, (exactly-once) where
  * epochs' ACK intents are recorded, and where large runs are staged (see [[WriteStaging]]).
  */
private[sink] final case class SinkConfig(options: SinkOptions, columns: SinkColumns,
    intentLog: Option[IntentLogLocation],
    hadoopConfBroadcast: Broadcast[SerializableConfiguration],
    staging: Option[StagingLocation] = None) {
  def client: ClientConfig = options.clientConfig

  // Broadcast, so that each executor deserializes the session's Hadoop configuration once, not
  // every task (it showed as 6% of a write's CPU).
  def hadoopConf: SerializableConfiguration = hadoopConfBroadcast.value

  /** Where this write's runs are staged: under the epoch's key where intents are recorded. */
  def stagingKey(epoch: Long): Option[String] = intentLog.map(_.key(epoch))
}
