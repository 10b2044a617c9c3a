package io.sparkgazette.spark
package source

import io.sparkgazette.client.GazetteClient
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.hadoop.SerializableConfiguration
import io.sparkgazette.spark.options.GazetteOptions
import io.sparkgazette.spark.source.offsets.{JournalRange, JournalTask, OffsetSpec, SourceOptions}
import io.sparkgazette.spark.source.planning.{JournalDirectory, JournalRangePlanner, OffsetsForTimes}
import io.sparkgazette.spark.source.reading.{JournalRangeReaderFactory, PieceStates, ReaderConfig}
import io.sparkgazette.spark.source.rows.RowShape
import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory}

/** A batch read of `[startingOffsets, endingOffsets)` of every journal: the messages that end
  * in that range, the journals' ranges packed into tasks by size as a stream's are. No state precedes it: a transaction whose first
  * messages lie before the starting offset has its remaining messages emitted at its ACK, as a
  * Gazette reader starting there does.
  */
private[source] final class GazetteBatch(options: SourceOptions, hadoopConf: SerializableConfiguration,
    shape: RowShape, passes: PieceStates.Cache = new PieceStates.Cache())
    extends Batch {

  private lazy val ranges: Array[InputPartition] = {
    val client = new GazetteClient(options.clientConfig)
    val directory = new JournalDirectory(client, options.target)
    try {
      val journals = directory.journals(mustExist = true)
      val names = journals.keys
      val start =
        OffsetsForTimes.resolve(options.startingOffsets, journals, directory, options, starting = true) match {
          case OffsetSpec.Earliest => directory.earliest(names)
          case OffsetSpec.Latest => directory.writeHeads(names)
          case OffsetSpec.Specific(explicit) =>
            resolve(directory, explicit, names, GazetteOptions.StartingOffsets, OffsetSpec.EarliestOffset)
          case other => throw GazetteErrors.internal(s"starting offsets $other were not resolved")
        }
      val heads = directory.writeHeads(names)
      val end = OffsetsForTimes.resolve(options.endingOffsets, journals, directory, options, starting = false) match {
        case OffsetSpec.Specific(explicit) =>
          val ends = resolve(directory, explicit, names, GazetteOptions.EndingOffsets, OffsetSpec.LatestOffset)
          explicit.filter(_._2 >= 0).keys.foreach { j =>
            if (ends(j) > heads(j)) throw GazetteErrors.endPastWriteHead(j, ends(j), heads(j))
          }
          ends
        case _ => heads
      }
      // A batch that ends before the write head reads on, up to it, for the acknowledgements of
      // the transactions open at its end (see JournalRangeReader).
      val ranges = names.toSeq.sorted.flatMap { j =>
        if (start(j) < end(j))
          Some(JournalRange(j, journals(j).contentType, readerConfig.labelsToShip(journals(j).labels), start(j), end(j),
              revision = journals(j).revision, lookAhead = heads(j)))
        else None
      }
      val pieces = RangeSplits.splitRanges(
        ranges,
        options,
        r => Some(r.start),
        parts =>
          passes(parts)(PieceStates.runJob(parts, readerConfig,
              "Gazette source: the producers' states at the pieces of journal ranges split read committed"))
      )
      RangeSplits.warnTooLarge(pieces.tooLarge, scala.collection.mutable.Set.empty)
      JournalRangePlanner.pack(
        pieces.ranges,
        (r: JournalRange) => r.bytes,
        options.bytesPerPartition,
        RangeSplits.minPartitions(options)
      ).map(JournalTask(_): InputPartition).toArray
    } finally {
      directory.close()
      client.close()
    }
  }

  // Explicit offsets, with -2 and -1 resolved and journals the JSON leaves out at `default`.
  private def resolve(directory: JournalDirectory, explicit: Map[String, Long], journals: Iterable[String],
      option: String,
      default: Long): Map[String, Long] = {
    explicit.keys.find(j => !journals.exists(_ == j)).foreach(j => throw GazetteErrors.unknownJournal(j, option))
    val wanted = journals.map(j => j -> explicit.getOrElse(j, default)).toMap
    val earliest = directory.earliest(wanted.filter(_._2 == OffsetSpec.EarliestOffset).keys)
    val latest = directory.writeHeads(wanted.filter(_._2 == OffsetSpec.LatestOffset).keys)
    wanted.map { case (j, o) => j -> (if (o >= 0) o else earliest.getOrElse(j, latest.getOrElse(j, 0L))) }
  }

  override def planInputPartitions(): Array[InputPartition] = GazetteErrors.brokerCalls(ranges)

  // One broadcast of the configuration however often Spark asks for the factory.
  private lazy val readerConfig = ReaderConfig(options, None, hadoopConf, shape)

  override def createReaderFactory(): PartitionReaderFactory = new JournalRangeReaderFactory(readerConfig)
}
