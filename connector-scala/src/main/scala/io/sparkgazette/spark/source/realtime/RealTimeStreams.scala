package io.sparkgazette.spark
package source
package realtime

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.source.offsets.SourceOptions

/** The refusal of real-time options where Spark has no real-time mode. */
private[source] object RealTimeStreams {

  /** Fails a stream given real-time options where Spark (`sparkVersion`) has no real-time mode. */
  def refuseWithout(options: SourceOptions, available: Boolean, sparkVersion: String): Unit =
    if (!available && options.realTimePartitions.isDefined) throw GazetteErrors.realTimeModeUnavailable(sparkVersion)
}
