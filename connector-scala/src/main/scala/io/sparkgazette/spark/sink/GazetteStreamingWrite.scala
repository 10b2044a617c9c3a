package io.sparkgazette.spark
package sink

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}

private[spark] final class GazetteStreamingWrite(options: SinkOptions, columns: SinkColumns,
    hadoopConf: SerializableConfiguration)
    extends StreamingWrite {
  private val driver = new SinkDriver(options, columns, hadoopConf, streaming = true)

  override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory =
    GazetteErrors.brokerCalls(writerFactory(info))

  private def writerFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory = {
    // Spark marks continuous queries only once they run, after building their write.
    if ("true" == SparkSession.active.sparkContext.getLocalProperty("__is_continuous_processing"))
      throw GazetteErrors.continuousProcessing()
    new GazetteDataWriterFactory(driver.config, driver.targets(), batchEpoch = -1, driver.epochProducers(),
      driver.threshold(info.numPartitions()), driver.newWriteId())
  }

  override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
    GazetteErrors.brokerCalls(driver.commit(epochId, messages))

  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
    GazetteErrors.brokerCalls(driver.abort(epochId, messages))
}
