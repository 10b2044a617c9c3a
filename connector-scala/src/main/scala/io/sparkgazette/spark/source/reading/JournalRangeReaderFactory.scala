package io.sparkgazette.spark
package source
package reading

import io.sparkgazette.spark.source.offsets.JournalTask
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}

/** Creates a [[JournalTaskReader]] per task, in the executors. */
private[source] final class JournalRangeReaderFactory(config: ReaderConfig) extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new JournalTaskReader(partition.asInstanceOf[JournalTask], config)
}
