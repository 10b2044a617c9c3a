package io.sparkgazette.spark
package sink
package realtime

import java.security.SecureRandom

import org.apache.hadoop.conf.Configuration

/** The driver's record of a real-time stream's batches, made as each batch starts, under
  * `<checkpointLocation>/gazette-sink/real-time/<batch>.json` and never replaced: the seed its
  * writers derive producers from, and the journals its rows are mapped over. A batch run again
  * after a failure reads both back, so its rows get the same UUIDs and go to the same journals
  * as in its first run, whatever was listed since. Without a checkpoint (an at-least-once
  * write) nothing is recorded.
  */
private[spark] final class RealTimeBatches(checkpointLocation: Option[String], conf: Configuration) {
  private val log = checkpointLocation.map(AckIntentLog.realTimeBatches(_, conf))

  /** The seed and targets of `batch`: as recorded, or as `listed` now and recorded so. */
  def start(batch: Long, listed: SinkTargets): (Long, SinkTargets) = log match {
    case None => (RealTimeBatches.random.nextLong(), listed)
    case Some(l) =>
      val recorded = l.read(batch.toString).getOrElse {
        // One seed for the stream's life, whichever mode its earlier batches ran in.
        val seed = l.latest().orElse(checkpointLocation.flatMap(c => AckIntentLog.epochs(c, conf).latest()))
          .flatMap(_.producers).fold(RealTimeBatches.random.nextLong())(_.seed)
        l.record(batch.toString, IntentRecord(Nil, Some(SinkProducers(seed, Map.empty)), journals = listed.journals))
      }
      (recorded.producers.get.seed, listed.copy(journals = recorded.journals.toIndexedSeq))
  }

  /** After `batch` committed: Spark never runs again a batch 100 before it. */
  def committed(batch: Long): Unit = log.foreach(_.prune(batch))
}

private object RealTimeBatches {
  val random = new SecureRandom()
}
