package io.sparkgazette.spark
package source

import io.sparkgazette.message.Framing
import io.sparkgazette.spark.source.offsets.{JournalRange, SourceOptions}
import io.sparkgazette.spark.source.planning.JournalRangePlanner
import io.sparkgazette.spark.source.reading.PieceStates
import org.slf4j.LoggerFactory

/** How a batch's ranges become tasks, the same for streams and batch queries: which ranges split
  * into pieces, and how many tasks a batch wants.
  */
private[source] object RangeSplits {
  private val log = LoggerFactory.getLogger(getClass.getName.stripSuffix("$"))

  /** Large ranges of ndjson split into pieces. Read uncommitted, into pieces of about
    * `bytesPerPartition`, and further for `minPartitions`. Read committed, every piece but the
    * last is read twice (see [[PieceStates]]), and a task's memory does not grow with its range:
    * the largest ranges are split only until there are `minPartitions` tasks, into pieces of at
    * least `bytesPerPartition`; only a range whose first message is known (`resume`: where the
    * state at its start resumes; None when that state is still to be rebuilt), and each piece but
    * the first gets the producers' states at its start from `firstPass` over the pieces before it.
    */
  def splitRanges(ranges: Seq[JournalRange], options: SourceOptions, resume: JournalRange => Option[Long],
      firstPass: Seq[PieceStates.Part] => Seq[PieceStates.Result]): PieceStates.Planned = {
    val lines = (r: JournalRange) => Framing.splitsAtNewlines(r.contentType)
    if (!options.readCommitted)
      PieceStates.Planned(JournalRangePlanner.split(ranges, lines, options.bytesPerPartition, minPartitions(options)))
    else if (!options.splitCommitted) PieceStates.Planned(ranges)
    else PieceStates.attach(
      JournalRangePlanner.split(ranges, r => lines(r) && resume(r).isDefined, Long.MaxValue / 4,
        minPartitions(options), minPieceBytes = options.bytesPerPartition),
      r => resume(r).get,
      minPartitions(options),
      firstPass
    )
  }

  /** Where a stream's range's first message begins, if the driver knows: the resume offset of the
    * state saved at its start, or its start where the query began the journal there (no state).
    */
  def knownResume(r: JournalRange): Option[Long] = r.base match {
    case Some(b) if b.offset == r.start => Some(b.resume)
    case None if !(r.origin >= 0 && r.origin < r.start) => Some(r.start)
    case _ => None
  }

  /** How many tasks read a real-time batch: `realTimePartitions`, else the session's default parallelism. */
  def realTimePartitions(options: SourceOptions): Int = options.realTimePartitions.getOrElse(defaultParallelism)

  /** Says, once per journal, that its range was read by one task. */
  def warnTooLarge(journals: Seq[String], warned: scala.collection.mutable.Set[String]): Unit =
    journals.filter(warned.add).foreach { j =>
      log.warn(s"journal $j: a range of it is read by one task: the producers' states at its pieces would hold more " +
        s"than ${PieceStates.MaxTransferSize} producers and messages (many producers, or a long transaction without " +
        "an ACK); metric rangesNotSplit")
    }

  /** At least this many tasks per batch where there are that many ranges: `minPartitions`, else the session's default parallelism. */
  def minPartitions(options: SourceOptions): Int = options.minPartitions.getOrElse(defaultParallelism)

  // The session's default parallelism; 1 where there is no session to ask (an executor, a test).
  private def defaultParallelism: Int =
    scala.util.Try(org.apache.spark.sql.SparkSession.getActiveSession.map(_.sparkContext.defaultParallelism))
      .toOption.flatten.getOrElse(1)
}
