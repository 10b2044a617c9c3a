package io.sparkgazette.spark
package sink

import io.sparkgazette.spark.hadoop.SerializableConfiguration
import io.sparkgazette.spark.sink.config.{SinkColumns, SinkOptions}
import io.sparkgazette.spark.sink.metrics.{SinkMetrics, SinkProgress}
import io.sparkgazette.spark.sink.realtime.RealTimeRuns
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.connector.write.streaming.StreamingWrite

/** The sink's protocol, shared by streaming epochs and batch jobs; a stream's epochs report
  * their counts to `progress`, and its real-time runs keep their state in `runs`.
  */
private[sink] final class GazetteWrite(info: LogicalWriteInfo, progress: SinkProgress, runs: RealTimeRuns)
    extends Write with DriverMetrics {
  private val options = {
    import scala.jdk.CollectionConverters._
    info.options().asCaseSensitiveMap().asScala.toMap
  }
  private val columns = SinkColumns(info.schema())
  // The session's Hadoop configuration: credentials set with spark.conf.set apply.
  private def hadoopConf = new SerializableConfiguration(SparkSession.active.sessionState.newHadoopConf())
  @volatile private var batch: Option[GazetteBatchWrite] = None

  override def toStreaming: StreamingWrite =
    new GazetteStreamingWrite(SinkOptions.parse(options, streaming = true), columns, hadoopConf, info.queryId(),
      progress, runs)

  override def toBatch: BatchWrite = {
    val b = new GazetteBatchWrite(SinkOptions.parse(options, streaming = false), columns, hadoopConf)
    batch = Some(b)
    b
  }

  override def supportedCustomMetrics(): Array[CustomMetric] = SinkMetrics.supported

  // What the batch's commit did that its tasks' metrics did not show.
  override protected def driverMetrics(): Array[CustomTaskMetric] =
    batch.flatMap(_.counted).fold(Array.empty[CustomTaskMetric])(c => SinkMetrics.task(c.unreported))

  override def description(): String = "Gazette"
}
