package io.sparkgazette.spark
package sink

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.hadoop.SerializableConfiguration
import io.sparkgazette.spark.sink.config.{SinkColumns, SinkOptions}
import io.sparkgazette.spark.sink.metrics.CommitCounts
import org.apache.spark.sql.connector.write._

/** A batch write is one epoch. With `batchId` (and `checkpointLocation`) its intents are
  * recorded under that id first, as a stream's epochs are, so a job run again with the same id
  * writes nothing twice and completes what a failed run recorded; without it every job is a
  * new write, whose job commit appends the intents directly, and its staged runs after them
  * (see [[staging.WriteStaging]]).
  */
private[sink] final class GazetteBatchWrite(options: SinkOptions, columns: SinkColumns,
    hadoopConf: SerializableConfiguration)
    extends BatchWrite {
  private val driver = new SinkDriver(options, columns, hadoopConf, streaming = false)
  private val epoch = 0L
  @volatile private var committed: Option[CommitCounts] = None

  /** What the committed job counted. */
  def counted: Option[CommitCounts] = committed

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory = GazetteErrors.brokerCalls {
    new GazetteDataWriterFactory(
      driver.config, driver.targets(), batchEpoch = epoch, threshold = driver.threshold(info.numPartitions()),
      writeId = driver.newWriteId())
  }

  override def commit(messages: Array[WriterCommitMessage]): Unit =
    committed = Some(GazetteErrors.brokerCalls(driver.commit(epoch, messages)))

  override def abort(messages: Array[WriterCommitMessage]): Unit =
    GazetteErrors.brokerCalls(driver.abort(epoch, messages))
}
