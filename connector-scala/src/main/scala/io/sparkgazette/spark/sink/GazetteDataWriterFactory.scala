package io.sparkgazette.spark
package sink

import io.sparkgazette.spark.sink.config.{SinkConfig, SinkTargets}
import io.sparkgazette.spark.sink.intents.SinkProducers
import io.sparkgazette.spark.sink.staging.StagingThreshold
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory}

/** Creates a [[GazetteDataWriter]] per task attempt, for streaming epochs and batch jobs. */
private[sink] final class GazetteDataWriterFactory(config: SinkConfig, targets: SinkTargets, batchEpoch: Long,
    producers: Option[SinkProducers] = None,
    threshold: StagingThreshold = StagingThreshold(Long.MaxValue, Long.MaxValue),
    writeId: String = "")
    extends DataWriterFactory with StreamingDataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    createWriter(partitionId, taskId, batchEpoch)

  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] =
    new GazetteDataWriter(config, targets, partitionId, epochId, producers, threshold, writeId)
}
