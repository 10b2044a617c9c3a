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
  * was listed since: a recorded journal the selector no longer matches is looked up by name. So
  * does the batch after it, which reads again what the first run read past the rerun's end; and
  * the batch after one that a task's retry committed, which reads again what the task's first
  * attempt, still appending, may have read past the retry's end. Without a checkpoint (an
  * at-least-once write) nothing is recorded.
  *
  * That a batch ran again is marked in the checkpoint too (`<batch>.again`), and that a retry
  * committed one of its tasks (`<batch>.retried`), not held in memory: Spark plans each batch's
  * write anew, and the batch after may be the first of yet another run of the query, after a
  * failure between the two. The marks cost a file each where there is one to make, and looking
  * for them two existence checks as each batch first starts.
  */
private[sink] final class RealTimeBatches(checkpointLocation: Option[String], conf: Configuration) {
  private val log = checkpointLocation.map(AckIntentLog.realTimeBatches(_, conf))

  /** The seed and targets of `batch`: as recorded, or as `listed` now and recorded so, with `seed`
    * where the run knows it already (else the latest record's, of either mode). `existing` looks
    * up, by name, recorded journals missing from `listed`: those it finds are kept.
    */
  def start(batch: Long, listed: SinkTargets, existing: Seq[String] => SinkTargets,
      seed: Option[Long] = None): (Long, SinkTargets) = log match {
    case None => (seed.getOrElse(RealTimeBatches.random.nextLong()), listed)
    case Some(l) =>
      lazy val epochs = AckIntentLog.epochs(checkpointLocation.get, conf)
      // Relabelled journals are the batch's still; deleted ones are gone, with their rows.
      def existingOf(journals: Seq[String]): (SinkTargets, IndexedSeq[String]) = {
        val missing = journals.filterNot(listed.contentTypes.contains)
        val known = if (missing.isEmpty) listed else listed.knowing(existing(missing))
        (known, journals.filter(known.contentTypes.contains).toIndexedSeq)
      }
      val recorded = l.read(batch.toString) match {
        case Some(r) =>
          l.mark(batch.toString, RealTimeBatches.Again)
          r
        case None =>
          // One seed across real-time batches (a batch after one run again rewrites its rows under
          // the same UUIDs), the first taken from the latest record of either mode.
          val s = seed.getOrElse(
            l.latest().orElse(epochs.latest()).flatMap(_.producers).fold(RealTimeBatches.random.nextLong())(_.seed))
          // The batch before ran again, maybe to an earlier end than its first run, or a retry
          // committed a task whose first attempt may have read on: this one places the rows that
          // run or attempt wrote past that end as it did; where every one of those journals was
          // deleted since, those rows went with them, and this batch takes the journals listed now.
          val previous = (batch - 1).toString
          val journals =
            (if (batch > 0 && RealTimeBatches.Marks.exists(l.marked(previous, _))) l.read(previous).map(_.journals)
             else None).filter(existingOf(_)._2.nonEmpty).getOrElse(listed.journals)
          l.record(batch.toString, IntentRecord(Nil, Some(SinkProducers(s, Map.empty)), journals = journals))
      }
      val (known, journals) = existingOf(recorded.journals)
      if (journals.isEmpty) throw GazetteErrors.noJournals(s"the journals batch $batch first wrote (${recorded.journals
          .mkString(", ")}), all deleted since")
      (recorded.producers.get.seed, known.copy(journals = journals))
  }

  /** After `batch` committed, `retried` where a task of it was committed by another than its first
    * attempt. Spark never runs again a batch 100 before it: every tenth batch, records and marks
    * older are deleted (listing them is on the way from one batch to the next).
    */
  def committed(batch: Long, retried: Boolean): Unit = log.foreach { l =>
    if (retried) l.mark(batch.toString, RealTimeBatches.Retried)
    if (batch % 10 == 0) l.prune(batch)
  }
}

private object RealTimeBatches {
  val random = new SecureRandom()
  // The marks of a batch that ran again, and of one that a task's retry committed.
  val Again = "again"
  val Retried = "retried"
  val Marks = Seq(Again, Retried)
}
