package io.sparkgazette.spark
package source
package realtime

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead.RecordStatus
import org.apache.spark.sql.connector.read.streaming.{PartitionOffset, SupportsRealTimeRead}

/** A [[RealTimeJournalReader]] as Spark's real-time engine (4.1 and newer) asks for rows: each
  * with its message's publish time, where its UUID tells, as the row's arrival time.
  */
private[source] final class RealTimePartitionReader(reader: RealTimeJournalReader)
    extends SupportsRealTimeRead[InternalRow] {

  override def next(): Boolean = reader.next()

  override def nextWithTimeout(timeoutMs: java.lang.Long): RecordStatus =
    nextWithTimeout(System.currentTimeMillis(), timeoutMs)

  override def nextWithTimeout(startTimeMs: java.lang.Long, timeoutMs: java.lang.Long): RecordStatus =
    if (!reader.nextWithin(startTimeMs, timeoutMs)) RecordStatus.newStatusWithoutArrivalTime(false)
    else reader.arrivalTimeMs.fold(RecordStatus.newStatusWithoutArrivalTime(true))(ms =>
      RecordStatus.newStatusWithArrivalTimeMs(ms))

  override def get(): InternalRow = reader.get()

  override def getOffset: PartitionOffset = reader.getOffset

  override def currentMetricsValues(): Array[CustomTaskMetric] = reader.currentMetricsValues()

  override def close(): Unit = reader.close()
}
