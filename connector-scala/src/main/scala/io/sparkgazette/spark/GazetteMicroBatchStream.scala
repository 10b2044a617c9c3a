package io.sparkgazette.spark

import java.util.Optional

import scala.jdk.CollectionConverters._

import io.sparkgazette.client.{ClientConfig, GazetteClient}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._
import org.slf4j.LoggerFactory

/** The streaming source: offsets are [[JournalOffsets]], each batch one [[JournalRange]] per
  * journal with new bytes, each read by a [[JournalRangeReader]] whose sequencer state crosses
  * batches through `checkpointLocation`.
  *
  * Journals are discovered again at every trigger; a new journal enters the offsets at its first
  * readable byte in the batch that discovers it, so every batch can be planned again, after a
  * restart, from its offsets alone.
  */
final class GazetteMicroBatchStream(options: SourceOptions, checkpointLocation: String, hadoopConf: SerializableConfiguration)
    extends MicroBatchStream with SupportsAdmissionControl with SupportsTriggerAvailableNow with ReportsSourceMetrics {
  import GazetteMicroBatchStream._

  private val client = new GazetteClient(options.clientConfig)
  private val directory = new JournalDirectory(client, options.target)
  private val stateDir = s"$checkpointLocation/sequencer"
  private val readerConfig = ReaderConfig(options, Some(stateDir), hadoopConf)

  @volatile private var known = Map.empty[String, JournalInfo]
  @volatile private var heads = Map.empty[String, Long]
  private var availableNowHeads: Option[Map[String, Long]] = None
  private var lastBatchAt = System.currentTimeMillis()

  override def initialOffset(): Offset = {
    val journals = discover()
    if (journals.isEmpty) log.warn(s"no Gazette journals match ${options.target.describe} yet")
    JournalOffsets(startingOffsets(options.startingOffsets, journals.keys))
  }

  private def startingOffsets(spec: OffsetSpec, journals: Iterable[String]): Map[String, Long] = spec match {
    case OffsetSpec.Earliest => directory.earliest(journals)
    case OffsetSpec.Latest   => directory.writeHeads(journals)
    case OffsetSpec.Specific(explicit) =>
      explicit.keys.find(j => !journals.exists(_ == j)).foreach(j => throw GazetteErrors.unknownJournal(j, GazetteOptions.StartingOffsets))
      val earliest = directory.earliest(journals.filter(j => explicit.getOrElse(j, OffsetSpec.EarliestOffset) == OffsetSpec.EarliestOffset))
      val latest = directory.writeHeads(journals.filter(j => explicit.get(j).contains(OffsetSpec.LatestOffset)))
      journals.map(j => j -> explicit.get(j).filter(_ >= 0).orElse(latest.get(j)).getOrElse(earliest(j))).toMap
  }

  override def deserializeOffset(json: String): Offset = JournalOffsets.fromJson(json)

  override def getDefaultReadLimit: ReadLimit = {
    // Bytes travel in Spark's row-count limits: Spark only hands them back to this source.
    val max = options.maxBytesPerTrigger.map(ReadLimit.maxRows)
    val min = options.minBytesPerTrigger.map(ReadLimit.minRows(_, options.maxTriggerDelay.toMillis))
    (max ++ min).toSeq match {
      case Seq()      => ReadLimit.allAvailable()
      case Seq(one)   => one
      case both       => ReadLimit.compositeLimit(both.toArray)
    }
  }

  override def latestOffset(): Offset =
    throw new UnsupportedOperationException("latestOffset(Offset, ReadLimit) is used with admission control")

  override def latestOffset(startOffset: Offset, limit: ReadLimit): Offset = {
    val start = startOffset.asInstanceOf[JournalOffsets].offsets.toMap
    val journals = discover()

    val vanished = start.keySet -- journals.keySet
    if (vanished.nonEmpty) {
      val what = s"journal(s) ${vanished.toSeq.sorted.mkString(", ")} no longer exist or no longer match ${options.target.describe}"
      if (options.failOnDataLoss) throw GazetteErrors.dataLoss(vanished.head, what)
      log.warn(s"$what; they are no longer read (failOnDataLoss=false)")
    }
    val current = start -- vanished
    val fresh = journals.keySet -- current.keySet
    val firstOffsets = directory.earliest(fresh)

    var observed = directory.writeHeads(current.keys)
    current.foreach { case (j, s) =>
      if (observed(j) < s) {
        if (options.failOnDataLoss) throw GazetteErrors.offsetsWentBackwards(j, s, observed(j))
        log.warn(s"journal $j: write head ${observed(j)} is before the query's offset $s; keeping $s")
        observed = observed.updated(j, s)
      }
    }
    heads = observed ++ firstOffsets
    val ceiling = availableNowHeads.map(cap => observed.map { case (j, h) => j -> math.min(h, cap.getOrElse(j, current(j))) })
      .getOrElse(observed)

    val available = JournalRangePlanner.behind(current, ceiling).values.sum
    val (maxBytes, minBytes, maxDelayMs) = limits(limit)
    val now = System.currentTimeMillis()
    val ends =
      if (JournalRangePlanner.shouldWait(available, minBytes, now - lastBatchAt, maxDelayMs)) current
      else maxBytes.map(JournalRangePlanner.capped(current, ceiling, _)).getOrElse(ceiling)
    if (ends != current) lastBatchAt = now
    // New journals enter at their first offset: their bytes are read from the next batch on.
    JournalOffsets(ends ++ firstOffsets)
  }

  private def limits(limit: ReadLimit): (Option[Long], Option[Long], Long) = limit match {
    case _: ReadAllAvailable => (None, None, 0L)
    case m: ReadMaxRows      => (Some(m.maxRows()), None, 0L)
    case m: ReadMinRows      => (None, Some(m.minRows()), m.maxTriggerDelayMs())
    case c: CompositeReadLimit =>
      c.getReadLimits.map(limits).foldLeft((Option.empty[Long], Option.empty[Long], 0L)) { (a, b) =>
        (a._1.orElse(b._1), a._2.orElse(b._2), math.max(a._3, b._3))
      }
    case other => throw new IllegalArgumentException(s"unsupported read limit $other")
  }

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
    val from = start.asInstanceOf[JournalOffsets].offsets
    val to = end.asInstanceOf[JournalOffsets].offsets
    val ranges = to.toSeq.flatMap { case (j, e) =>
      from.get(j).filter(_ < e).map(s => (j, s, e))
    }
    if (ranges.exists { case (j, _, _) => !known.contains(j) }) discover()
    ranges.map { case (j, s, e) =>
      val info = known.getOrElse(j, throw GazetteErrors.dataLoss(j, "the journal no longer exists"))
      JournalRange(j, info.contentType, info.labels, s, e): InputPartition
    }.toArray
  }

  override def createReaderFactory(): PartitionReaderFactory = new JournalRangeReaderFactory(readerConfig)

  override def commit(end: Offset): Unit = {
    val store = new SequencerStateStore(stateDir, hadoopConf.value)
    end.asInstanceOf[JournalOffsets].offsets.foreach { case (j, o) => store.prune(j, o) }
  }

  override def prepareForTriggerAvailableNow(): Unit =
    availableNowHeads = Some(directory.writeHeads(discover().keys))

  override def metrics(latestConsumedOffset: Optional[Offset]): java.util.Map[String, String] = {
    val consumed = latestConsumedOffset.map[Map[String, Long]] {
      case o: JournalOffsets => o.offsets.toMap
      case o                 => JournalOffsets.parseJson(o.json())
    }.orElse(Map.empty)
    JournalRangePlanner.metrics(consumed, heads).asJava
  }

  override def stop(): Unit = {
    directory.close()
    client.close()
  }

  override def toString: String = s"GazetteMicroBatchStream[${options.target.describe}]"

  private def discover(): Map[String, JournalInfo] = {
    val journals = directory.journals()
    known = journals
    journals
  }
}

object GazetteMicroBatchStream {
  private val log = LoggerFactory.getLogger(classOf[GazetteMicroBatchStream])
}

/** Creates a [[JournalRangeReader]] per range, in the executors. */
final class JournalRangeReaderFactory(config: ReaderConfig) extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new JournalRangeReader(partition.asInstanceOf[JournalRange], config)
}
