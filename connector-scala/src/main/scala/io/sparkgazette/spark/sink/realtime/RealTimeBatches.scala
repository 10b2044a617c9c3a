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
  *
  * That a batch ran again is marked in the checkpoint too (`<batch>.again`), not held in memory:
  * Spark plans each batch's write anew, and the batch after a rerun may be the first of yet
  * another run of the query, after a failure between the two. The mark costs a file on a rerun
  * only, and looking for it one existence check as each batch first starts.
  */
private[sink] final class RealTimeBatches(checkpointLocation: Option[String], conf: Configuration) {
  private val log = checkpointLocation.map(AckIntentLog.realTimeBatches(_, conf))

  /** The seed and targets of `batch`: as recorded, or as `listed` now and recorded so, with `seed`
    * where the run knows it already (else the latest record's, of either mode).
    */
  def start(batch: Long, listed: SinkTargets, seed: Option[Long] = None): (Long, SinkTargets) = log match {
    case None => (seed.getOrElse(RealTimeBatches.random.nextLong()), listed)
    case Some(l) =>
      lazy val epochs = AckIntentLog.epochs(checkpointLocation.get, conf)
      val recorded = l.read(batch.toString) match {
        case Some(r) =>
          l.mark(batch.toString, RealTimeBatches.Again)
          r
        case None =>
          // One seed across real-time batches (a batch after one run again rewrites its rows under
          // the same UUIDs), the first taken from the latest record of either mode.
          val s = seed.getOrElse(
            l.latest().orElse(epochs.latest()).flatMap(_.producers).fold(RealTimeBatches.random.nextLong())(_.seed))
          // The batch before ran again, maybe to an earlier end than its first run: this one places
          // the rows that run wrote past that end as it did.
          val previous = (batch - 1).toString
          val journals =
            (if (batch > 0 && l.marked(previous, RealTimeBatches.Again)) l.read(previous).map(_.journals) else None)
              .getOrElse(listed.journals)
          l.record(batch.toString, IntentRecord(Nil, Some(SinkProducers(s, Map.empty)), journals = journals))
      }
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
  // The mark of a batch that ran again.
  val Again = "again"
}
