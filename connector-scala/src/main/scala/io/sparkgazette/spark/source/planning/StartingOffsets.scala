package io.sparkgazette.spark
package source
package planning

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.options.GazetteOptions
import io.sparkgazette.spark.source.offsets.{JournalOffsets, JournalPosition, OffsetSpec, SourceOptions}
import org.slf4j.LoggerFactory

/** Where a stream starts in each journal it finds at its start (`startingOffsets` and the
  * starting times): resolved once, for the checkpoint to keep across restarts.
  */
private[source] final class StartingOffsets(directory: JournalDirectory, options: SourceOptions) {
  import StartingOffsets.log

  def apply(journals: Map[String, JournalInfo]): JournalOffsets = {
    if (journals.isEmpty) log.warn(s"no Gazette journals match ${options.target.describe} yet")
    val (suspended, readable) = journals.partition(_._2.suspended)
    // Times become offsets here, once: the checkpoint keeps them for every restart.
    val spec = OffsetsForTimes.resolve(options.startingOffsets, journals, directory, options, starting = true)
    // A suspended journal has no replica to ask: its write head is where it was suspended. Read
    // from the earliest, it joins when an append resumes it, like a journal created then.
    val latest = spec match {
      case OffsetSpec.Latest => suspended.keySet
      case OffsetSpec.Specific(given) =>
        suspended.keySet.filter(j => given.get(j).exists(_ != OffsetSpec.EarliestOffset))
      case _ => Set.empty[String]
    }
    val explicit = spec match { case OffsetSpec.Specific(e) => e; case _ => Map.empty[String, Long] }
    val offsets = this.offsets(spec, readable.keys, ignore = suspended.keySet) ++
      latest.map(j => j -> explicit.get(j).filter(_ >= 0).getOrElse(suspended(j).suspendedAt))
    JournalOffsets(offsets.map { case (j, o) => j -> JournalPosition(o, journals(j).revision, o) })
  }

  private def offsets(spec: OffsetSpec, journals: Iterable[String], ignore: Set[String]): Map[String, Long] =
    spec match {
      case OffsetSpec.Earliest => directory.earliest(journals)
      case OffsetSpec.Latest => directory.writeHeads(journals)
      case OffsetSpec.Specific(explicit) =>
        explicit.keys.find(j => !journals.exists(_ == j) && !ignore(j)).foreach(j =>
          throw GazetteErrors.unknownJournal(j, GazetteOptions.StartingOffsets))
        val earliest = directory.earliest(
          journals.filter(j => explicit.getOrElse(j, OffsetSpec.EarliestOffset) == OffsetSpec.EarliestOffset))
        val latest = directory.writeHeads(
          journals.filter(j => explicit.get(j).exists(o => o == OffsetSpec.LatestOffset || o >= 0)))
        explicit.collect {
          case (j, o) if o >= 0 && latest.get(j).exists(_ < o) =>
            throw GazetteErrors.startPastWriteHead(j, o, latest(j))
        }
        journals.map(j => j -> explicit.get(j).filter(_ >= 0).orElse(latest.get(j)).getOrElse(earliest(j))).toMap
      case other => throw GazetteErrors.internal(s"starting offsets $other were not resolved")
    }
}

private object StartingOffsets {
  private val log = LoggerFactory.getLogger(classOf[StartingOffsets])
}
