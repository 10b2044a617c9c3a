package io.sparkgazette.spark
package sink
package config

import io.sparkgazette.spark.sink.intents.AckIntentLog
import org.apache.hadoop.conf.Configuration

/** Where a write's intents are recorded, and under which key each epoch is; travels to the
  * writers so that a write already recorded writes nothing.
  */
private[sink] final case class IntentLogLocation(checkpointLocation: String, batchId: Option[String]) {
  def open(conf: Configuration): AckIntentLog =
    if (batchId.isDefined) AckIntentLog.batches(checkpointLocation, conf)
    else AckIntentLog.epochs(checkpointLocation, conf)

  def key(epoch: Long): String = batchId.getOrElse(epoch.toString)
}

private[sink] object IntentLogLocation {

  /** Exactly-once streams record every epoch; batch jobs only when the user names them with
    * `batchId`, so that every other batch job is a new write.
    */
  def of(options: SinkOptions, streaming: Boolean): Option[IntentLogLocation] =
    if (!options.exactlyOnce) None
    else if (streaming) options.checkpointLocation.map(IntentLogLocation(_, None))
    else options.batchId.map(id => IntentLogLocation(options.checkpointLocation.get, Some(id)))
}
