package io.sparkgazette.spark

import java.util

import scala.jdk.CollectionConverters._

import io.sparkgazette.spark.source.rows.TypedSchema
import org.apache.spark.sql.connector.catalog.{SupportsRead, SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.read.streaming.ReportsSinkMetrics
import io.sparkgazette.spark.sink.GazetteWriteBuilder
import io.sparkgazette.spark.sink.metrics.SinkProgress
import io.sparkgazette.spark.sink.realtime.RealTimeRuns
import io.sparkgazette.spark.source.GazetteScanBuilder
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** Gazette journals as a table: read and written as a stream or a batch; read with `typed`, rows
  * of a schema's fields parsed from the messages. Written by a stream, it is the stream's sink,
  * whose metrics Spark asks it for with each trigger's progress. Spark makes one for each start
  * of a query and keeps it for the run, while it plans each batch's write anew: what the sink
  * keeps from batch to batch (its metrics, a real-time run's state) is held here.
  */
private[spark] final class GazetteTable(tableSchema: StructType, typed: Option[TypedSchema] = None)
    extends SupportsRead with SupportsWrite with ReportsSinkMetrics {
  private val sinkProgress = new SinkProgress
  private val realTimeRuns = new RealTimeRuns

  override def name(): String = "gazette"

  override def schema(): StructType = tableSchema

  override def capabilities(): util.Set[TableCapability] =
    Set(
      TableCapability.MICRO_BATCH_READ,
      TableCapability.BATCH_READ,
      TableCapability.STREAMING_WRITE,
      TableCapability.BATCH_WRITE,
      TableCapability.TRUNCATE,
      TableCapability.ACCEPT_ANY_SCHEMA
    ).asJava

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = new GazetteScanBuilder(options, typed)

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    new GazetteWriteBuilder(info, sinkProgress, realTimeRuns)

  override def metrics(): util.Map[String, String] = sinkProgress.take()
}
