package io.sparkgazette.spark
package source
package realtime

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.source.reading.{JournalRangeReader, RangeStart, ReaderConfig}
import io.sparkgazette.spark.source.state.{SequencerState, SequencerStateStore}

/** Where a real-time task's read of a journal starts: the producers' states the driver handed
  * it (the previous real-time batch's end), none when not read committed, or else what the query's
  * saved states say at the range's start, rebuilt as a micro-batch's range would rebuild them.
  */
private[realtime] object RealTimeStart {
  def apply(spec: RealTimeJournal, config: ReaderConfig): SequencerState = {
    val range = spec.range
    spec.producers match {
      case Some(producers) => SequencerState(range.start, producers, range.revision, range.origin)
      case None if !config.options.readCommitted => SequencerState(range.start, Nil, range.revision, range.origin)
      case None =>
        val store = new SequencerStateStore(config.stateDir.getOrElse(
            throw GazetteErrors.internal(s"a real-time read of ${range.journal} has no state directory")),
          config.hadoopConf.value)
        try {
          val from = range.base.filter(_.offset == range.start) match {
            case Some(ref) => RangeStart.Saved(store.load(ref))
            case None => RangeStart.Rebuild(range.base.map(b => b.offset -> store.load(b)))
          }
          val rebuild = new JournalRangeReader(range.copy(end = range.start), config, from)
          try rebuild.startState
          finally rebuild.close()
        } finally store.close()
    }
  }
}
