package io.sparkgazette.spark

import io.sparkgazette.client.ClientConfig
import org.apache.spark.sql.connector.read.InputPartition

/** One task's work: the messages of `journal` that end in `(start, end]`, read from where the
  * state at `start` says the first of them begins. `origin` is where the query began reading
  * the journal with no state (-1 for a batch query, which has none), and `revision` the Etcd
  * revision that created the journal: together they name the states this range may use.
  * `lookAhead` (batch queries, which carry no state past their end): the transactions open at
  * `end` are resolved by reading on, up to this offset (see [[JournalRangeReader]]).
  */
final case class JournalRange(journal: String, contentType: String, labels: Map[String, Seq[String]], start: Long, end: Long,
    origin: Long = -1L, revision: Long = 0L, lookAhead: Long = -1L) extends InputPartition

/** What every reader of a scan needs besides its range: the source's options, and for
  * streaming queries the directory where sequencer states cross batches.
  */
final case class ReaderConfig(options: SourceOptions, stateDir: Option[String], hadoopConf: SerializableConfiguration) {
  def client: ClientConfig = options.clientConfig
}
