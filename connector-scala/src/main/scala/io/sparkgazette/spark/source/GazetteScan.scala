package io.sparkgazette.spark
package source

import scala.jdk.CollectionConverters._

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.hadoop.SerializableConfiguration
import io.sparkgazette.spark.options.GazetteOptions
import io.sparkgazette.spark.reflection.RealTimeMode
import io.sparkgazette.spark.source.offsets.SourceOptions
import io.sparkgazette.spark.source.reading.{PieceStates, SourceMetrics}
import io.sparkgazette.spark.source.realtime.RealTimeStreams
import io.sparkgazette.spark.source.rows.{MessageToRow, ProtobufType, RowShape, TypedRead, TypedSchema}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.connector.read.{Batch, Scan}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** The scan of one query; options are parsed here, where batch and streaming defaults differ.
  * `required`: the columns the query reads, when Spark pruned them; all otherwise. `typed`: the
  * schema the rows' message fields are parsed with, if the source was given one.
  */
private[source] final class GazetteScan(options: CaseInsensitiveStringMap, required: Option[StructType] = None,
    typed: Option[TypedSchema] = None)
    extends Scan {
  private def hadoopConf = SerializableConfiguration.ofSession(SparkSession.active)
  private val includeLabels = "true".equalsIgnoreCase(options.getOrDefault(GazetteOptions.IncludeLabels, "false"))

  private val (schema, shape) = typed match {
    case None =>
      val s = required.fold(MessageToRow.schema(includeLabels))(MessageToRow.pruned(includeLabels, _))
      (s, RowShape(s.fieldNames.toSeq))
    case Some(t) =>
      val pruned = t.prune(required.getOrElse(t.table))
      val read = TypedRead(t, pruned.fields, GazetteOptions.parsing(options),
        SparkSession.active.sessionState.conf.sessionLocalTimeZone, ProtobufType.of(options))
      (pruned.schema(includeLabels), RowShape(pruned.meta.getOrElse(Nil), Some(read)))
  }

  override def readSchema(): StructType = schema

  override def description(): String = s"Gazette(${GazetteErrors.describe(options.asCaseSensitiveMap().asScala.toMap)})"

  // Spark asks a scan for its batch more than once, and plans each: a first pass over split ranges runs once.
  private lazy val passes = new PieceStates.Cache()

  override def toBatch: Batch =
    new GazetteBatch(SourceOptions.parse(options, streaming = false), hadoopConf, shape, passes)

  // On a Spark with real-time mode, the stream can serve both kinds of batch; elsewhere only
  // micro-batches, and asking for real-time tasks is an error.
  override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream = {
    val parsed = SourceOptions.parse(options, streaming = true)
    RealTimeStreams.refuseWithout(parsed, RealTimeMode.available, SparkSession.active.version)
    if (RealTimeMode.available) RealTimeStreamFactory(parsed, checkpointLocation, hadoopConf, shape)
    else new GazetteMicroBatchStream(parsed, checkpointLocation, hadoopConf, shape)
  }

  override def supportedCustomMetrics(): Array[CustomMetric] = SourceMetrics.supported
}
