package io.sparkgazette.spark
package source

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.hadoop.SerializableConfiguration
import io.sparkgazette.spark.source.offsets.{JournalTask, SourceOptions}
import io.sparkgazette.spark.source.reading.{JournalTaskReader, ReaderConfig}
import io.sparkgazette.spark.source.realtime.{
  JournalsReached, RealTimeJournalReader, RealTimePartitionReader, RealTimeTask
}
import io.sparkgazette.spark.source.rows.RowShape
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.connector.read.streaming.{Offset, PartitionOffset, SupportsRealTimeMode}
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}

/** The stream on a Spark with real-time mode (4.1 and newer): micro-batches as
  * [[GazetteMicroBatchStream]] reads them, and real-time batches (`Trigger.RealTime`), whose
  * tasks ([[RealTimeJournalReader]]) read their journals from the batch's start until time is up
  * and say where they stopped. Only the 4.x build has this file, and only this class and
  * [[RealTimePartitionReader]] name Spark's real-time interfaces, so that the connector still loads
  * on a 4.0 Spark, which has none of them.
  */
private[source] final class GazetteRealTimeStream(options: SourceOptions, checkpointLocation: String,
    hadoopConf: SerializableConfiguration,
    shape: RowShape)
    extends GazetteMicroBatchStream(options, checkpointLocation, hadoopConf, shape) with SupportsRealTimeMode {

  // As Kafka's source refuses maxOffsetsPerTrigger and the like: a real-time batch has no planned end.
  override def prepareForRealTimeMode(): Unit = {
    if (options.microBatchLimits.nonEmpty) throw GazetteErrors.microBatchLimitsInRealTime(options.microBatchLimits)
    realTime = true
  }

  override def planInputPartitions(start: Offset): Array[InputPartition] = planRealTime(start)

  override def mergeOffsets(offsets: Array[PartitionOffset]): Offset =
    mergeReached(offsets.toSeq.map {
      case r: JournalsReached => r
      case other => throw GazetteErrors.internal(s"a real-time task reported offset $other")
    })

  override def createReaderFactory(): PartitionReaderFactory = new RealTimeReaderFactory(readerConfig)
}

/** Readers for both kinds of batch: a [[RealTimeJournalReader]] for a real-time task. */
private[source] final class RealTimeReaderFactory(config: ReaderConfig) extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = partition match {
    case t: RealTimeTask => new RealTimePartitionReader(new RealTimeJournalReader(t, config))
    case t: JournalTask => new JournalTaskReader(t, config)
    case other => throw GazetteErrors.internal(s"unknown input partition $other")
  }
}

/** Made only where [[RealTimeMode.available]]: loading it needs Spark's real-time interfaces. */
private[source] object RealTimeStreamFactory {
  def apply(options: SourceOptions, checkpointLocation: String, hadoopConf: SerializableConfiguration,
      shape: RowShape): MicroBatchStream = new GazetteRealTimeStream(options, checkpointLocation, hadoopConf, shape)
}
