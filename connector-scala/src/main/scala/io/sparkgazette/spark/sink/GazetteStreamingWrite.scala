package io.sparkgazette.spark
package sink

import io.sparkgazette.spark.sink.realtime._
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}

/** A stream's write: epochs committed through the driver (see [[SinkDriver]]), or, in real-time
  * mode, rows published as they come (see [[RealTimeDataWriter]]).
  */
private[spark] final class GazetteStreamingWrite(options: SinkOptions, columns: SinkColumns,
    hadoopConf: SerializableConfiguration, queryId: String)
    extends StreamingWrite {
  private val driver = new SinkDriver(options, columns, hadoopConf, streaming = true)
  private lazy val realTime = RealTimeQuery.isRealTime(SparkSession.active, queryId)
  private lazy val realTimeBatches = new RealTimeBatches(options.checkpointLocation, hadoopConf.value)

  override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory =
    GazetteErrors.brokerCalls(writerFactory(info))

  private def writerFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory = {
    val spark = SparkSession.active
    // Spark marks continuous queries only once they run, after building their write.
    if ("true" == spark.sparkContext.getLocalProperty("__is_continuous_processing"))
      throw GazetteErrors.continuousProcessing()
    if (realTime) {
      if (options.exactlyOnce && columns.origin < 0) throw GazetteErrors.realTimeOriginNeeded()
      val batch = RealTimeQuery.currentBatch(spark)
        .getOrElse(throw GazetteErrors.internal("a real-time batch without a batch id"))
      val (seed, targets) = realTimeBatches.start(batch, driver.targets())
      new RealTimeWriterFactory(driver.config, targets, seed)
    } else
      new GazetteDataWriterFactory(driver.config, driver.targets(), batchEpoch = -1, driver.epochProducers(),
        driver.threshold(info.numPartitions()), driver.newWriteId())
  }

  override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
    if (realTime) realTimeBatches.committed(epochId)
    else GazetteErrors.brokerCalls(driver.commit(epochId, messages))

  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
    if (!realTime) GazetteErrors.brokerCalls(driver.abort(epochId, messages))
}

/** Creates a [[RealTimeDataWriter]] per task of a real-time batch. */
private[spark] final class RealTimeWriterFactory(config: SinkConfig, targets: SinkTargets, seed: Long)
    extends StreamingDataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] =
    new RealTimeDataWriter(config, targets, partitionId, epochId, seed)
}
