package io.sparkgazette.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{SupportsRead, SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.read.{Batch, Scan, ScanBuilder, SupportsPushDownRequiredColumns}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** Gazette journals as a table: read and written as a stream or a batch. */
final class GazetteTable(tableSchema: StructType) extends SupportsRead with SupportsWrite {
  override def name(): String = "gazette"

  override def schema(): StructType = tableSchema

  override def capabilities(): util.Set[TableCapability] =
    Set(TableCapability.MICRO_BATCH_READ, TableCapability.BATCH_READ, TableCapability.STREAMING_WRITE,
      TableCapability.BATCH_WRITE, TableCapability.TRUNCATE, TableCapability.ACCEPT_ANY_SCHEMA).asJava

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = new GazetteScanBuilder(options)

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = new GazetteWriteBuilder(info)
}

/** Builds the scan of one query with the columns it reads: Spark prunes the others, and the
  * readers never build them (a UUID formatted for a query that counts rows is pure cost).
  */
final class GazetteScanBuilder(options: CaseInsensitiveStringMap) extends ScanBuilder with SupportsPushDownRequiredColumns {
  private var required: Option[StructType] = None

  override def pruneColumns(requiredSchema: StructType): Unit = required = Some(requiredSchema)

  override def build(): Scan = new GazetteScan(options, required)
}

/** The scan of one query; options are parsed here, where batch and streaming defaults differ.
  * `required`: the columns the query reads, when Spark pruned them; all otherwise.
  */
final class GazetteScan(options: CaseInsensitiveStringMap, required: Option[StructType] = None) extends Scan {
  // The session's Hadoop configuration, as Spark builds it for its own checkpoint: credentials
  // set with spark.conf.set reach the source's state files too.
  private def hadoopConf = {
    val spark = SparkSession.active
    val conf = new org.apache.hadoop.conf.Configuration(spark.sparkContext.hadoopConfiguration)
    spark.conf.getAll.foreach { case (k, v) => if (v != null) conf.set(k, v) }
    new SerializableConfiguration(conf)
  }
  private val includeLabels = "true".equalsIgnoreCase(options.getOrDefault(GazetteOptions.IncludeLabels, "false"))

  private val schema = required.fold(MessageToRow.schema(includeLabels))(MessageToRow.pruned(includeLabels, _))
  private def columns: Seq[String] = schema.fieldNames.toSeq

  override def readSchema(): StructType = schema

  override def description(): String = s"Gazette(${GazetteErrors.describe(options.asCaseSensitiveMap().asScala.toMap)})"

  override def toBatch: Batch = new GazetteBatch(GazetteOptions.source(options, streaming = false), hadoopConf, columns)

  override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream =
    new GazetteMicroBatchStream(GazetteOptions.source(options, streaming = true), checkpointLocation, hadoopConf, columns)

  override def supportedCustomMetrics(): Array[CustomMetric] = SourceMetrics.supported
}
