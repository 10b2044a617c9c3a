package io.sparkgazette.spark
package sink
package realtime

import java.security.SecureRandom

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.sink.config.SinkTargets
import io.sparkgazette.spark.sink.intents.{AckIntentLog, IntentRecord, SinkProducers}
import org.apache.hadoop.conf.Configuration

/** The driver's record of a real-time stream's batches, made as each batch starts, under
  * `<checkpointLocation>/gazette-sink/real-time/<batch>.json` and never replaced: the seed its
  * writers derive producers from, and the journals its rows are mapped over. A batch run again
  * after a failure reads both back, so its rows get the same UUIDs and go to the same journals
  * as in its first run (less journals deleted since, whose rows were lost with them), whatever
  * was listed since; so does the batch after it, which reads again what the first run read past
  * the rerun's end. Without a checkpoint (an at-least-once write) nothing is recorded.
  */
private[spark] final class RealTimeBatches(checkpointLocation: Option[String], conf: Configuration) {
  private val log = checkpointLocation.map(AckIntentLog.realTimeBatches(_, conf))
  // The journals of a batch that ran again, for the batch after it.
  private var carried: Option[Seq[String]] = None
  // The seed this run's batches record: looked up once, not listed again at every batch's start.
  private var seed: Option[Long] = None

  /** The seed and targets of `batch`: as recorded, or as `listed` now and recorded so. */
  def start(batch: Long, listed: SinkTargets): (Long, SinkTargets) = log match {
    case None => (RealTimeBatches.random.nextLong(), listed)
    case Some(l) =>
      lazy val epochs = AckIntentLog.epochs(checkpointLocation.get, conf)
      val recorded = l.read(batch.toString) match {
        case Some(r) => carried = Some(r.journals); r
        case None =>
          // One seed across real-time batches (a batch after one run again rewrites its rows under
          // the same UUIDs), the first taken from the latest record of either mode.
          val seed = this.seed.getOrElse(
            l.latest().orElse(epochs.latest()).flatMap(_.producers).fold(RealTimeBatches.random.nextLong())(_.seed))
          val journals = carried.getOrElse(listed.journals)
          carried = None
          l.record(batch.toString, IntentRecord(Nil, Some(SinkProducers(seed, Map.empty)), journals = journals))
      }
      seed = recorded.producers.map(_.seed)
      val journals = recorded.journals.filter(listed.contentTypes.contains).toIndexedSeq
      if (journals.isEmpty) throw GazetteErrors.noJournals(s"the journals batch $batch first wrote (${recorded.journals
          .mkString(", ")}), all deleted since")
      (recorded.producers.get.seed, listed.copy(journals = journals))
  }

  /** After `batch` committed: Spark never runs again a batch 100 before it. Every tenth batch:
    * listing the records is on the way from one batch to the next.
    */
  def committed(batch: Long): Unit = if (batch % 10 == 0) log.foreach(_.prune(batch))
}

private object RealTimeBatches {
  val random = new SecureRandom()
}
