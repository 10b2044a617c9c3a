package io.sparkgazette.spark

import io.sparkgazette.client.ClientConfig
import org.apache.spark.sql.connector.read.InputPartition

/** One task's work: the messages of `journal` that begin in `[start, end)`. */
final case class JournalRange(journal: String, contentType: String, labels: Map[String, Seq[String]], start: Long, end: Long)
    extends InputPartition

/** What every reader of a scan needs besides its range: the source's options, and for
  * streaming queries the directory where sequencer states cross batches.
  */
final case class ReaderConfig(options: SourceOptions, stateDir: Option[String], hadoopConf: SerializableConfiguration) {
  def client: ClientConfig = options.clientConfig
}
