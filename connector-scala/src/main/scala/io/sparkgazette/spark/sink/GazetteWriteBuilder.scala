package io.sparkgazette.spark
package sink

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.sink.metrics.SinkProgress
import io.sparkgazette.spark.sink.realtime.RealTimeRuns
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend

/** Builds the sink's write: append (and update, read as append); complete mode is refused. A
  * stream's epochs report their counts to `progress`, and its real-time runs keep their state in `runs`.
  */
private[spark] final class GazetteWriteBuilder(info: LogicalWriteInfo, progress: SinkProgress, runs: RealTimeRuns)
    extends WriteBuilder with SupportsTruncate with SupportsStreamingUpdateAsAppend {
  private var truncating = false

  override def truncate(): WriteBuilder = { truncating = true; this }

  override def build(): Write = {
    if (truncating)
      throw GazetteErrors.completeMode()
    new GazetteWrite(info, progress, runs)
  }
}
