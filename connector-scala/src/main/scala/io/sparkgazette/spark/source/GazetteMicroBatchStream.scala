package io.sparkgazette.spark
package source

import java.util.Optional

import scala.jdk.CollectionConverters._

import io.sparkgazette.client.GazetteClient
import io.sparkgazette.message.Framing
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.hadoop.SerializableConfiguration
import io.sparkgazette.spark.options.GazetteOptions
import io.sparkgazette.spark.source.offsets.{JournalOffsets, JournalPosition, JournalRange, JournalTask, SourceOptions}
import io.sparkgazette.spark.source.planning.{
  ByteLimits, JournalDirectory, JournalInfo, JournalRangePlanner, PlanningAhead, StaleHeads, StartingOffsets
}
import io.sparkgazette.spark.source.progress.{NewestClock, TimeBehindHeads}
import io.sparkgazette.spark.source.reading.{JournalRangeReaderFactory, PieceStates, ReaderConfig}
import io.sparkgazette.spark.source.realtime.{JournalsReached, RealTimeJournal, RealTimeTask}
import io.sparkgazette.spark.source.rows.RowShape
import io.sparkgazette.spark.source.state._
import org.apache.spark.sql.connector.read.streaming._
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.slf4j.LoggerFactory

/** The streaming source: offsets are [[JournalOffsets]], each batch one [[JournalRange]] per
  * journal with new bytes, packed into [[JournalTask]]s by size and read by
  * [[JournalTaskReader]]s, whose sequencer states cross batches through `checkpointLocation`
  * (one file per task, found again through the [[SequencerStateCatalog]]).
  *
  * Journals are discovered again at every trigger; a new journal enters the offsets at its first
  * readable byte in the batch that discovers it, with the Etcd revision that created it and that
  * byte as its origin, so every batch can be planned again, after a restart, from its offsets
  * alone, and a journal created again under the same name is never read at the old one's offsets.
  */
private[source] class GazetteMicroBatchStream(options: SourceOptions, checkpointLocation: String,
    hadoopConf: SerializableConfiguration,
    shape: RowShape)
    extends MicroBatchStream with SupportsAdmissionControl with SupportsTriggerAvailableNow with ReportsSourceMetrics {
  import GazetteMicroBatchStream._

  private val client = new GazetteClient(options.clientConfig)
  private val directory = new JournalDirectory(client, options.target)
  private val ahead = new PlanningAhead(directory)
  private val stateDir = SequencerStateStore.dirOf(checkpointLocation)
  private val store = new SequencerStateStore(stateDir, hadoopConf.value)
  // The newest message the query's tasks emitted, and each journal's time behind its head.
  private val newest = new NewestClock
  org.apache.spark.sql.SparkSession.active.sparkContext.register(newest)
  private val timeBehind = new TimeBehindHeads(client,
    j =>
      known.get(j).flatMap(i => Framing.forContentType(i.contentType, options.uuidPointer, options.uuidField).toOption))
  private[source] val readerConfig = ReaderConfig(options, Some(stateDir), hadoopConf, shape, Some(newest))
  store.initialize()
  private val catalog = new SequencerStateCatalog(store)

  @volatile private var known = Map.empty[String, JournalInfo]
  @volatile private var heads = Map.empty[String, Long]
  @volatile private var planned = Map.empty[String, JournalPosition]
  // A new primary can answer with a stale head until its next listing of the store: see StaleHeads.
  private def graceMs(j: String): Long = options.clientConfig.retryTimeout.toMillis +
    known.get(j).fold(0L)(_.refreshIntervalMs)
  private val staleHeads = new StaleHeads(graceMs)
  private val startingOffsets = new StartingOffsets(directory, options)
  // What the driver's last trigger cost, in milliseconds, and how many tasks the last batch had.
  @volatile private var latestOffsetMs, planMs, commitMs, tasks = 0L
  @volatile private var restarted, skippedAtPlanning = 0L
  // The last real-time batch's task metrics, summed over its tasks (see JournalsReached).
  @volatile private var realTimeTaskMetrics = Map.empty[String, Long]
  // Read-committed ranges the last batch split, bytes and milliseconds their first pass took, and
  // ranges left whole because their pieces' states were too large.
  @volatile private var rangesSplit, rangesNotSplit = 0
  @volatile private var prescannedBytes, prescanMs = 0L
  private val passes = new PieceStates.Cache()
  private val warnedTooLarge = scala.collection.mutable.Set[String]()
  private val skippedRanges = scala.collection.mutable.Set[(String, Long, Long)]()
  private var availableNowHeads: Option[Map[String, Long]] = None
  private var lastBatchAt = System.currentTimeMillis()

  // Spark plans the first batch from initialOffset again after a restart: it must not move.
  override def initialOffset(): Offset = GazetteErrors.brokerCalls {
    JournalOffsets.fromJson(
      store.once(SequencerStateStore.InitialOffsetsName)(startingOffsets(discover(mustExist = true)).json()))
  }

  override def deserializeOffset(json: String): Offset = JournalOffsets.fromJson(json)

  override def getDefaultReadLimit: ReadLimit =
    ByteLimits(options.maxBytesPerTrigger, options.minBytesPerTrigger, options.maxTriggerDelay.toMillis).readLimit

  override def latestOffset(): Offset =
    throw new UnsupportedOperationException("latestOffset(Offset, ReadLimit) is used with admission control")

  override def latestOffset(startOffset: Offset, limit: ReadLimit): Offset = {
    val t0 = System.nanoTime()
    try
      // A real-time batch has no planned end: Spark (4.3) asks for the latest offset between
      // batches, while no task reads, and then uses the tasks' merged offsets as the batch's end.
      // The heads the last planning found answer at once; planning asks the brokers again.
      if (realTime) startOffset.asInstanceOf[JournalOffsets].upTo(heads)
      else GazetteErrors.brokerCalls(nextOffset(startOffset, limit))
    finally latestOffsetMs = (System.nanoTime() - t0) / 1000000
  }

  /** Set once Spark prepares this stream for real-time mode (see [[GazetteRealTimeStream]]). */
  @volatile protected var realTime = false

  private def nextOffset(startOffset: Offset, limit: ReadLimit): Offset = {
    val start = startOffset.asInstanceOf[JournalOffsets].positions
    val journals = discover()

    val vanished = start.keySet -- journals.keySet
    if (vanished.nonEmpty) {
      val what =
        s"journal(s) ${vanished.toSeq.sorted.mkString(", ")} no longer exist or no longer match ${options.target.describe}"
      if (options.failOnDataLoss) throw GazetteErrors.dataLoss(vanished.head, what)
      log.warn(s"$what; they are no longer read (failOnDataLoss=false)")
    }
    // A journal deleted and created again under the same name starts over, as a new one.
    val recreated = start.collect { case (j, p) if journals.get(j).exists(i => isRecreated(p, i)) => j }.toSet
    recreated.toSeq.sorted.foreach { j =>
      val what = s"it was deleted and created again (revision ${start(j).revision}, now ${journals(j).revision}) " +
        s"after the query read it up to offset ${start(j).offset}"
      if (options.failOnDataLoss) throw GazetteErrors.dataLoss(j, what)
      log.warn(s"journal $j: $what; reading the new journal from its first byte (failOnDataLoss=false)")
      restarted += 1
    }
    // A FULL-suspended journal has no replica to read from: it keeps its offset until resumed.
    val (suspended, readable) = (start -- vanished -- recreated).partition { case (j, _) => journals(j).suspended }
    val current = readable.map { case (j, p) => j -> p.offset }
    val fresh = journals.filterNot { case (j, i) => i.suspended || start.contains(j) && !recreated(j) }.keySet
    val firstOffsets = directory.earliest(fresh)

    val (answered, verdicts) = judgeHeads(current)
    // Without failOnDataLoss, a journal whose head went backwards starts over at its head, as a
    // journal created again does: the bytes before its offset may no longer be those read.
    val restartAt = verdicts.collect { case (j, b: StaleHeads.Behind) => j -> b.lowest }
    // States an earlier entry of a journal read afresh left are not this one's.
    catalog.forget(fresh ++ restartAt.keys, justRan = Some(SequencerStateStore.batchDir(start)))
    val from = current ++ restartAt
    // A journal whose head is behind reads nothing until the head passes its offset again.
    val observed = answered ++ verdicts.collect { case (j, w: StaleHeads.Waiting) => j -> w.offset }
    heads = observed ++ firstOffsets
    val ceiling = JournalRangePlanner.ceiling(from, observed, availableNowHeads)

    val available = JournalRangePlanner.behind(from, ceiling).values.sum
    val ByteLimits(maxBytes, minBytes, maxDelayMs) = ByteLimits.of(limit)
    val now = System.currentTimeMillis()
    // An AvailableNow run reads what is there, however little.
    val waiting = availableNowHeads.isEmpty &&
      JournalRangePlanner.shouldWait(available, minBytes, now - lastBatchAt, maxDelayMs)
    // A journal started over ends this batch where it starts again: its next batch reads from there.
    val ends = (if (waiting) from else maxBytes.map(JournalRangePlanner.capped(from, ceiling, _)).getOrElse(ceiling)) ++
      restartAt
    if (ends != from) lastBatchAt = now
    // New journals enter at their first offset: their bytes are read from the next batch on.
    val positions = ends.map { case (j, e) =>
      val origin = if (restartAt.contains(j)) restartAt(j) else readable(j).origin
      j -> readable(j).copy(offset = e, revision = journals(j).revision, origin = origin)
    } ++
      suspended ++ firstOffsets.map { case (j, o) => j -> JournalPosition(o, journals(j).revision, o) }
    planned = positions
    timeBehind.prefetch(ends, heads)
    JournalOffsets(positions)
  }

  /** The journals' write heads and the verdicts on those behind the query's offsets (see
    * [[StaleHeads]]), said to the user once per episode; a head gone backwards fails the query
    * here under failOnDataLoss.
    */
  private def judgeHeads(current: Map[String, Long],
      asked: Map[String, Long] = Map.empty): (Map[String, Long], Map[String, StaleHeads.Verdict]) = {
    var answered = asked.filter(h => current.contains(h._1)) ++
      directory.writeHeads(current.keys.filterNot(asked.contains))
    var verdicts = report(staleHeads.judge(current, answered, System.currentTimeMillis()))
    // An AvailableNow run ends once it has read what is there: it waits out a stale head here,
    // or every scheduled run would end quietly before a head gone back for good is judged.
    while (availableNowHeads.isDefined && verdicts.values.exists(_.isInstanceOf[StaleHeads.Waiting])) {
      Thread.sleep(StaleHeadPollMs)
      answered = directory.writeHeads(current.keys)
      verdicts = report(staleHeads.judge(current, answered, System.currentTimeMillis()))
    }
    // The run's heads were taken when it began: one stale then is raised to the head that came back.
    availableNowHeads = availableNowHeads.map(cap =>
      cap ++ cap.collect {
        case (j, c) if current.get(j).exists(c < _) && answered.get(j).exists(_ >= current(j)) => j -> answered(j)
      })
    (answered, verdicts)
  }

  private def report(verdicts: Map[String, StaleHeads.Verdict]): Map[String, StaleHeads.Verdict] =
    verdicts.toSeq.sortBy(_._1).map {
      case (j, w @ StaleHeads.Waiting(offset, head, _, true)) =>
        log.info(s"journal $j: its primary answers with write head $head, before the query's offset $offset " +
          s"(a broker taking the journal over has not caught up yet); waiting up to ${graceMs(j)} ms for it")
        j -> w
      case (j, StaleHeads.Grew(offset, head, lowest, waited)) =>
        writtenAgainFrom(j, lowest, offset) match {
          case Some(from) =>
            staleHeads.confirm(j)
            wentBack(
              j,
              s"its write head went back before offset $offset the query has read, and the journal is written " +
                s"again from $from (its head is now $head): a broker lost bytes before they were replicated or persisted",
              from
            )
            j -> StaleHeads.Behind(offset, head, from, waited, first = true)
          case None => j -> StaleHeads.Waiting(offset, head, waited, first = false)
        }
      case (j, b @ StaleHeads.Behind(offset, head, lowest, waited, true)) =>
        wentBack(
          j,
          s"its write head went back to $lowest, before offset $offset the query has read, and stayed behind " +
            s"it for $waited ms (now $head; a head is waited for up to option '${GazetteOptions.RetryTimeout}' plus the " +
            "journal's fragment refresh interval)",
          lowest
        )
        j -> b
      case other => other
    }.toMap

  private def wentBack(journal: String, what: String, restartAt: Long): Unit = {
    if (options.failOnDataLoss) throw GazetteErrors.dataLoss(journal, what)
    log.warn(
      s"journal $journal: $what; reading it again from offset $restartAt with fresh state: what the query read " +
        s"before is not read again, and bytes written there since are (failOnDataLoss=false)")
    restarted += 1
  }

  /** Where the journal is written again below `offset`, if it is: a fragment there, past its
    * lowest head `lowest`, that no store holds yet is a spool begun again, not one a new primary
    * has listed from the store; it begins where the appends since began.
    */
  private def writtenAgainFrom(journal: String, lowest: Long, offset: Long): Option[Long] =
    client.listFragments(journal).flatMap(_.spec)
      .filter(f => f.backingStore.isEmpty && f.begin < offset && f.end > lowest).map(_.begin).reduceOption(_ min _)
      .map(math.min(_, lowest))

  private def isRecreated(p: JournalPosition, now: JournalInfo): Boolean =
    p.revision != 0 && now.revision != 0 && p.revision != now.revision

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
    // A real-time batch's end keeps its producers' states in the offset, not in the files a
    // micro-batch continues from: rebuilt from those files, a commit the batch ended inside
    // would be emitted again.
    if (start.asInstanceOf[JournalOffsets].producers.nonEmpty) throw GazetteErrors.realTimeCheckpointInMicroBatches()
    val t0 = System.nanoTime()
    try GazetteErrors.brokerCalls(plan(start.asInstanceOf[JournalOffsets].positions,
          end.asInstanceOf[JournalOffsets].positions))
    finally planMs = (System.nanoTime() - t0) / 1000000
  }

  private def plan(from: Map[String, JournalPosition], to: Map[String, JournalPosition]): Array[InputPartition] = {
    val ranges = to.toSeq.flatMap { case (j, e) =>
      from.get(j).filter(s =>
        s.offset < e.offset && (s.revision == 0 || e.revision == 0 || s.revision == e.revision)).map(s => (j, s, e))
    }
    if (ranges.exists { case (j, _, e) => !known.get(j).exists(i => !isRecreated(e, i)) }) discover()
    // The states at the batch's start: the previous batch's tasks saved them in its directory.
    if (ranges.nonEmpty) catalog.refresh(SequencerStateStore.batchDir(from))
    val journalRanges = ranges.flatMap { case (j, s, e) =>
      known.get(j).filterNot(i => isRecreated(e, i)) match {
        case Some(info) =>
          val rebuildFrom = if (e.origin >= 0 && e.origin <= s.offset) e.origin else s.offset
          Some(JournalRange(
              j,
              info.contentType,
              readerConfig.labelsToShip(info.labels),
              s.offset,
              e.offset,
              e.origin,
              e.revision,
              base = catalog.lookup(j, rebuildFrom, s.offset, e.revision, e.origin),
              refreshIntervalMs = info.refreshIntervalMs
            ))
        case None =>
          // The batch was planned before a restart, and the journal has gone since.
          val what = s"the journal no longer exists as it did when bytes [${s.offset}, ${e.offset}) were planned"
          if (options.failOnDataLoss) throw GazetteErrors.dataLoss(j, what)
          // Spark may plan a batch's partitions more than once: the range is said and counted once.
          if (skippedRanges.add((j, s.offset, e.offset))) {
            log.warn(s"journal $j: $what; skipping them (failOnDataLoss=false)")
            skippedAtPlanning += e.offset - s.offset
          }
          None
      }
    }
    catalog.pin(journalRanges.flatMap(_.base))
    val batch = SequencerStateStore.batchDir(to)
    val pieces = RangeSplits.splitRanges(journalRanges.sortBy(_.journal), options, RangeSplits.knownResume, firstPass)
    rangesSplit = pieces.split
    prescannedBytes = pieces.prescanned
    rangesNotSplit = pieces.tooLarge.size
    RangeSplits.warnTooLarge(pieces.tooLarge, warnedTooLarge)
    val packed =
      JournalRangePlanner.pack(pieces.ranges, (r: JournalRange) => r.bytes, options.bytesPerPartition,
        RangeSplits.minPartitions(options))
    tasks = packed.size
    packed.map(rs => JournalTask(rs, Some(SequencerStateStore.taskFile(batch, rs))): InputPartition).toArray
  }

  /** A real-time batch's tasks (see [[GazetteRealTimeStream]]): every readable journal from its
    * offset in `startOffset` on, with no end, spread by name over `realTimePartitions` tasks; a
    * journal found since enters at its first readable byte and is read in this batch. Journals
    * that vanished or were created again, and write heads behind the offsets, are treated as a
    * micro-batch treats them.
    */
  private[source] def planRealTime(startOffset: Offset): Array[InputPartition] = synchronized {
    // Spark's planner asks each copy of the batch's scan for its partitions (two or three a
    // batch), while no task reads: the first plan answers them all, until the batch ends.
    realTimePlan.collect { case (s, tasks) if s eq startOffset => tasks }.getOrElse {
      val tasks = planRealTimeAnew(startOffset)
      realTimePlan = Some((startOffset, tasks))
      tasks
    }
  }

  // The current real-time batch's start and its tasks, planned once (see planRealTime).
  private var realTimePlan = Option.empty[(Offset, Array[InputPartition])]

  private def planRealTimeAnew(startOffset: Offset): Array[InputPartition] = {
    val t0 = System.nanoTime()
    try GazetteErrors.brokerCalls {
        val start = startOffset.asInstanceOf[JournalOffsets]
        val PlanningAhead.Answers(journals, askedHeads) = ahead.answers(start.positions.keySet)
        known = journals
        val gone = start.positions.keySet.filter(j => !journals.get(j).exists(i => !isRecreated(start.positions(j), i)))
        gone.toSeq.sorted.foreach { j =>
          val what = if (journals.contains(j)) s"it was deleted and created again after the query read it up to " +
            s"offset ${start(j)}"
          else s"it no longer exists or no longer matches ${options.target.describe}"
          if (options.failOnDataLoss) throw GazetteErrors.dataLoss(j, what)
          log.warn(s"journal $j: $what (failOnDataLoss=false)")
          if (journals.contains(j)) restarted += 1
        }
        val kept = start.positions -- gone
        val fresh = journals.filter { case (j, i) => !kept.contains(j) && !i.suspended }.keySet
        val firstOffsets = directory.earliest(fresh)
        // Heads are judged as for a micro-batch: one behind the offset is waited for (so is the
        // task's Read), and one gone back for good fails the query or starts the journal over there.
        val (answered, verdicts) =
          judgeHeads(kept.collect { case (j, p) if !journals(j).suspended => j -> p.offset }, askedHeads)
        val restartAt = verdicts.collect { case (j, b: StaleHeads.Behind) => j -> b.lowest }
        catalog.forget(fresh ++ restartAt.keys)
        heads = answered ++ firstOffsets
        val positions = kept ++ restartAt.map { case (j, at) => j -> kept(j).copy(offset = at, origin = at) } ++
          firstOffsets.map { case (j, o) => j -> JournalPosition(o, journals(j).revision, o) }
        if (positions.keys.exists(j => !start.producers.contains(j)))
          catalog.refresh(SequencerStateStore.batchDir(start.positions))
        val all = positions.toSeq.sortBy(_._1).map { case (j, p) =>
          val info = journals(j)
          val producers =
            if (restartAt.contains(j)) Some(Nil) else start.producers.get(j).filter(_ => kept.contains(j))
          val rebuildFrom = if (p.origin >= 0 && p.origin <= p.offset) p.origin else p.offset
          RealTimeJournal(
            JournalRange(
              j,
              info.contentType,
              readerConfig.labelsToShip(info.labels),
              p.offset,
              Long.MaxValue,
              p.origin,
              p.revision,
              base = if (producers.isDefined) None else catalog.lookup(j, rebuildFrom, p.offset, p.revision, p.origin),
              refreshIntervalMs = info.refreshIntervalMs
            ),
            producers
          )
        }
        // A suspended journal is read too: its task waits for the append that resumes it (brokers
        // suspend idle journals), unless its states would have to be rebuilt from bytes no broker
        // serves until then. Such a journal's position (and states) is handed back unchanged.
        val (reads, waiting) = all.partition(r =>
          !journals.get(r.range.journal).exists(_.suspended) || r.producers.isDefined || !options.readCommitted ||
            RangeSplits.knownResume(r.range).isDefined)
        catalog.pin(reads.flatMap(_.range.base))
        planned = positions
        val suspended = waiting.map(_.range.journal).toSet
        val carried = JournalsReached(positions.filter { case (j, _) => suspended(j) },
          start.producers.filter { case (j, _) => suspended(j) })
        val tasks = RealTimeTask.spread(reads, carried, RangeSplits.realTimePartitions(options))
        this.tasks = tasks.size
        tasks.toArray[InputPartition]
      }
    finally planMs = (System.nanoTime() - t0) / 1000000
  }

  /** A real-time batch's end: where each task's journals stand, and their producers' states. */
  private[source] def mergeReached(reached: Seq[JournalsReached]): Offset = {
    synchronized { realTimePlan = None }
    val all = reached.foldLeft(JournalsReached.Empty)(_ ++ _)
    realTimeTaskMetrics = all.metrics
    ahead.start(all.positions.keySet)
    JournalOffsets(collection.immutable.SortedMap(all.positions.toSeq: _*), all.producers)
  }

  // Spark may plan a batch's partitions more than once: the first pass runs once for the same parts.
  private def firstPass(parts: Seq[PieceStates.Part]): Seq[PieceStates.Result] = passes(parts) {
    val t0 = System.nanoTime()
    try PieceStates.runJob(
        parts,
        readerConfig,
        s"Gazette source: the producers' states at the pieces of ${parts.map(_.range.journal).distinct.size} " +
          "journal range(s) split read committed"
      )
    finally prescanMs = (System.nanoTime() - t0) / 1000000
  }

  override def createReaderFactory(): PartitionReaderFactory = new JournalRangeReaderFactory(readerConfig)

  /** Keeps, for each journal, the newest state at or below the committed offset (the next batch
    * starts there, or rebuilds from it), and forgets journals the query no longer reads.
    */
  override def commit(end: Offset): Unit = {
    val t0 = System.nanoTime()
    try {
      val committed = end.asInstanceOf[JournalOffsets].positions
      catalog.refresh(SequencerStateStore.batchDir(committed), again = true)
      catalog.prune(committed, planned)
    } finally commitMs = (System.nanoTime() - t0) / 1000000
  }

  override def prepareForTriggerAvailableNow(): Unit = GazetteErrors.brokerCalls {
    availableNowHeads = Some(directory.writeHeads(discover().filterNot(_._2.suspended).keys))
  }

  override def metrics(latestConsumedOffset: Optional[Offset]): java.util.Map[String, String] = {
    val consumed = latestConsumedOffset.map[Map[String, Long]] {
      case o: JournalOffsets => o.offsets.toMap
      case o => JournalOffsets.parsePositions(o.json()).map { case (j, p) => j -> p.offset }
    }.orElse(Map.empty)
    val now = System.currentTimeMillis()
    val inTime = TimeBehindHeads.metrics(timeBehind(consumed, heads, now)) ++ NewestClock.metrics(newest.value, now)
    (JournalRangePlanner.metrics(consumed, heads) ++ inTime ++ Map(
      "suspendedJournals" -> known.values.count(_.suspended).toString,
      "journalsRestarted" -> restarted.toString,
      "journalsWaitingForHead" -> staleHeads.waiting.toString,
      "bytesSkippedAtPlanning" -> skippedAtPlanning.toString,
      "latestOffsetMs" -> latestOffsetMs.toString,
      "planMs" -> planMs.toString,
      "commitMs" -> commitMs.toString,
      "tasks" -> tasks.toString,
      "rangesSplit" -> rangesSplit.toString,
      "bytesPrescanned" -> prescannedBytes.toString,
      "prescanMs" -> prescanMs.toString,
      "rangesNotSplit" -> rangesNotSplit.toString
    ) ++ realTimeTaskMetrics.map { case (name, value) => name -> value.toString }).asJava
  }

  override def stop(): Unit = Seq[AutoCloseable](ahead, timeBehind, directory, client).foreach(_.close())

  override def toString: String = s"GazetteMicroBatchStream[${options.target.describe}]"

  private def discover(mustExist: Boolean = false): Map[String, JournalInfo] = {
    val journals = directory.journals(mustExist)
    known = journals
    journals
  }
}

private[source] object GazetteMicroBatchStream {
  private val log = LoggerFactory.getLogger(classOf[GazetteMicroBatchStream])
  private val StaleHeadPollMs = 500L
}
