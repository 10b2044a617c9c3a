package io.sparkgazette.spark
package sink

import io.sparkgazette.spark.runtime.SerializableConfiguration
import io.sparkgazette.spark.sink.config.{SinkColumns, SinkOptions}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.connector.write.streaming.StreamingWrite

/** The sink's protocol, shared by streaming epochs and batch jobs. */
private[spark] final class GazetteWrite(info: LogicalWriteInfo) extends Write {
  private val options = {
    import scala.jdk.CollectionConverters._
    info.options().asCaseSensitiveMap().asScala.toMap
  }
  private val columns = SinkColumns(info.schema())
  // The session's Hadoop configuration: credentials set with spark.conf.set apply.
  private def hadoopConf = new SerializableConfiguration(SparkSession.active.sessionState.newHadoopConf())

  override def toStreaming: StreamingWrite =
    new GazetteStreamingWrite(SinkOptions.parse(options, streaming = true), columns, hadoopConf, info.queryId())

  override def toBatch: BatchWrite =
    new GazetteBatchWrite(SinkOptions.parse(options, streaming = false), columns, hadoopConf)

  override def description(): String = "Gazette"
}
