package io.sparkgazette.spark
package source

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.hadoop.SerializableConfiguration
import io.sparkgazette.spark.source.offsets.SourceOptions
import io.sparkgazette.spark.source.rows.RowShape
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream

/** Spark 3.5 has no real-time mode: [[RealTimeMode.available]] is false, and a real-time stream
  * is never asked for.
  */
private[source] object RealTimeStreamFactory {
  def apply(options: SourceOptions, checkpointLocation: String, hadoopConf: SerializableConfiguration,
      shape: RowShape): MicroBatchStream = throw GazetteErrors.realTimeModeUnavailable(SparkSession.active.version)
}
