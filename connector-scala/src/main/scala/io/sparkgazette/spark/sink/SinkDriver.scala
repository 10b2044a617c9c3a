package io.sparkgazette.spark
package sink

import scala.util.control.NonFatal

import io.sparkgazette.client.protocol.ListResponse
import io.sparkgazette.message.{AckIntent, Framing, ProducerId}
import io.sparkgazette.spark.clients.ClientCache
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.hadoop.SerializableConfiguration
import io.sparkgazette.spark.options.GazetteOptions
import io.sparkgazette.spark.reflection.ActiveQuery
import io.sparkgazette.spark.sink.config.{
  IntentLogLocation, SinkColumns, SinkConfig, SinkOptions, SinkTargets, StagingLocation, WriteTarget
}
import io.sparkgazette.spark.sink.intents.{GazetteCommitMessage, IntentRecord, SinkProducers, StagedRun}
import io.sparkgazette.spark.sink.metrics.{CommitCounts, SinkCounts, SinkMetrics}
import io.sparkgazette.spark.sink.rows.CsvWidths
import com.google.protobuf.ByteString
import io.sparkgazette.spark.sink.staging.{StagedRuns, StagingThreshold, WriteStaging}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.write._
import org.slf4j.LoggerFactory

/** The driver's half of the protocol: resolve targets, record intents, append ACKs. */
private[sink] class SinkDriver(options: SinkOptions, columns: SinkColumns, hadoopConf: SerializableConfiguration,
    streaming: Boolean, queryId: String = "") {
  import SinkDriver._

  // Spark builds a write, and so a driver, for every micro-batch and never closes it: the
  // driver borrows the JVM's shared client instead of opening channels of its own.
  private def client = ClientCache(options.clientConfig)
  private val location = IntentLogLocation.of(options, streaming)
  private val log_ = location.map(_.open(hadoopConf.value))

  private val staging = {
    val sc = SparkSession.active.sparkContext
    val s = WriteStaging.of(options, location, sc.master, sc.getConf, hadoopConf.value)
    // A root an option names is made here, so that one nobody can write fails the write before
    // any task runs; a root the connector chose for itself (Spark's local directory, the default
    // file system's home) is made only when a task first stages there.
    if (location.isEmpty)
      s.filter(l => Set(GazetteOptions.StagingLocation, GazetteOptions.CheckpointLocation).contains(l.setting))
        .foreach(_.prepare(hadoopConf.value))
    s
  }

  // Broadcast once it is first asked for: a real-time run keeps its first batch's (see RealTimeRun).
  lazy val config: SinkConfig =
    SinkConfig(options, columns, location, SparkSession.active.sparkContext.broadcast(hadoopConf), staging)

  // A stream's producers as the latest recorded epoch of this run left them; random producers elsewhere.
  private var producers: Option[SinkProducers] = None

  /** The producers this epoch's writers publish as (see [[SinkProducers]]). */
  def epochProducers(): Option[SinkProducers] = {
    if (producers.isEmpty && streaming)
      producers = log_.map(_.latest().flatMap(_.producers).fold(SinkProducers.fresh(run))(_.forRun(run)))
    producers
  }

  // Where Spark's runId cannot be found, every epoch counts as a run of its own: its producers
  // are fresh, which is safe, and readers track more of them.
  private lazy val run = ActiveQuery.runId(SparkSession.active, queryId).getOrElse {
    logger.warn(s"the run of query $queryId is unknown on this Spark; each epoch publishes under new producers")
    SinkDriver.writeId()
  }

  // The run of this write's tasks whose staged files an abort deletes (another run of the
  // same batchId may be staging beside it).
  private var writeId: Option[String] = None

  def newWriteId(): String = { val id = SinkDriver.writeId(); writeId = Some(id); id }

  /** How large a task's run in a journal grows before it is staged, with `partitions` tasks. */
  def threshold(partitions: Int): StagingThreshold = StagingThreshold(options.readerRingSize, partitions)

  /** The journals of this epoch: the selector is listed again each time. */
  def targets(): SinkTargets = {
    val journals = options.target match {
      case WriteTarget.OneJournal(j) =>
        client.list(s"name=$j").headOption
          .getOrElse(throw GazetteErrors.missingJournal(j, Some(GazetteOptions.Journal))) :: Nil
      case WriteTarget.BySelector(s) =>
        val listed = client.list(s)
        if (listed.isEmpty) throw GazetteErrors.noJournals(s"selector '$s'")
        listed
    }
    targetsOf(journals)
  }

  /** Those of `names` that exist, each looked up by name: a journal the selector no longer
    * matches (relabelled) is still there for a batch that ran over it before.
    */
  def existing(names: Seq[String]): SinkTargets =
    targetsOf(names.flatMap(j => client.list(s"name=$j").headOption))

  private def targetsOf(journals: Seq[ListResponse.Journal]): SinkTargets = {
    val contentTypes = journals.map(_.getSpec).map(s =>
      s.name -> s.labels.toSeq.flatMap(_.labels).find(_.name == "content-type").map(_.value).getOrElse("")).toMap
    val mapping = options.mapping.getOrElse(if (columns.key >= 0) "rendezvous" else "random")
    val unwritable = contentTypes.flatMap { case (j, ct) => Framing.forContentType(ct).left.toOption.map(j -> _) }
    val csvWidths = contentTypes.collect { case (j, Framing.Csv) => CsvWidths(client, j).map(j -> _) }.flatten.toMap
    SinkTargets(journals.map(_.getSpec.name).sorted.toIndexedSeq, contentTypes, mapping, unwritable, csvWidths,
      journals.map(j => j.getSpec.name -> j.createRevision).toMap)
  }

  /** Records the epoch's intents and staged runs (unless a previous run did), then appends the
    * ACKs, all of a journal's in one append, then has the staged runs appended. The ACKs go
    * first: the runs they commit are small enough for readers' rings only while nothing large
    * comes between them. A write without intents checks its staged runs as a recorded one does,
    * and has nothing to record. Returns what the epoch's tasks and the driver counted.
    */
  def commit(epoch: Long, messages: Array[WriterCommitMessage]): CommitCounts = {
    val t0 = System.nanoTime()
    refuseUnwritable(messages)
    val record = log_ match {
      case None =>
        checkStaged(epoch, messages)
        IntentRecord(collect(messages), staged = staged(messages))
      case Some(l) =>
        val key = location.get.key(epoch)
        l.read(key).getOrElse {
          val fresh = collect(messages)
          checkStaged(epoch, messages)
          fault("driver-before-persist", epoch)
          l.record(key,
            IntentRecord(fresh, epochProducers().map(_.after(acks(messages), retried(messages))),
              staged(messages)))
        }
    }
    val intents = record.intents
    fault("driver-after-persist", epoch)
    var appended = SinkCounts.Zero
    intents.groupBy(_.journal).toSeq.sortBy(_._1).zipWithIndex.foreach { case ((journal, acks), i) =>
      val content = ByteString.copyFrom(acks.map(_.intent).reduce(_ ++ _))
      if (StagedRuns.appendUnlessDeleted(client, journal, content, s"the ACKs of epoch $epoch"))
        appended += SinkCounts.of(SinkMetrics.Appends -> 1L, SinkMetrics.BytesAppended -> content.size.toLong,
          SinkMetrics.AckIntentsWritten -> acks.size.toLong)
      if (i == 0) fault("driver-after-some-acks", epoch)
    }
    // Whatever this run's options: a recorded epoch's staged runs are committed rows.
    for (l <- log_; loc <- location) {
      val key = loc.key(epoch)
      val underCheckpoint = StagingLocation.underCheckpoint(loc.checkpointLocation, batches = loc.batchId.isDefined)
      if (record.staged.nonEmpty && !l.published(key)) {
        appended += publishStaged(epoch, record.staged)
        l.markPublished(key)
        appended += StagedRuns.forget(record.staged, config)
      }
      underCheckpoint.delete(key, hadoopConf.value)
      if (streaming) underCheckpoint.deleteBefore(epoch, hadoopConf.value)
    }
    if (log_.isEmpty) {
      if (record.staged.nonEmpty) {
        publishing = record.staged
        appended += publishStaged(epoch, record.staged)
        appended += StagedRuns.forget(record.staged, config)
        publishing = Nil
      }
      deleteUnrecordedRuns()
    }
    if (streaming) log_.foreach(_.prune(epoch))
    logger.info(
      s"${describe(epoch)} committed: ${intents.size} ACK intents over ${intents.map(_.journal).distinct.size} journals" +
        (if (record.staged.isEmpty) ""
         else s", ${record.staged.size} staged runs of ${record.staged.map(_.bytes).sum} bytes"))
    CommitCounts.of(messages.toSeq.collect { case m: GazetteCommitMessage => m.counts },
      appended + SinkCounts.of(SinkMetrics.CommitMs -> (System.nanoTime() - t0) / 1000000))
  }

  // The staged runs of a write without intents while they are appended.
  @volatile private var publishing: Seq[StagedRun] = Nil

  private def publishStaged(epoch: Long, runs: Seq[StagedRun]): SinkCounts = {
    val appended = StagedRuns.publish(
      SparkSession.active.sparkContext, runs, config, s"Gazette sink: appending the staged runs of ${describe(epoch)}")
    fault("driver-after-publish", epoch)
    appended
  }

  /** Fails the epoch, before anything is recorded or appended, where the driver does not see a
    * staged run as its task wrote it, or a staged journal was re-created meanwhile.
    */
  private def checkStaged(epoch: Long, messages: Array[WriterCommitMessage]): Unit = {
    val runs = staged(messages)
    if (runs.nonEmpty) {
      val (where, option) = location match {
        case Some(l) => (l.checkpointLocation, GazetteOptions.CheckpointLocation)
        case None => staging.fold(("", GazetteOptions.StagingLocation))(s => (s.root, s.setting))
      }
      StagedRuns.verify(runs, where, option, hadoopConf.value)
      refuseRecreated(epoch, runs)
    }
  }

  /** A write without intents keeps its staged runs only until it commits or aborts. */
  private def deleteUnrecordedRuns(): Unit =
    for (s <- staging if log_.isEmpty; id <- writeId)
      try {
        val dir = s.runDir(None, id)
        val fs = dir.getFileSystem(hadoopConf.value)
        if (fs.exists(dir)) fs.delete(dir, true)
      } catch { case NonFatal(e) => logger.warn(s"deleting the staged runs under ${s.runDir(None, id)}: $e") }

  private def describe(epoch: Long): String =
    if (streaming) s"epoch $epoch" else location.fold("a batch write")(l => s"batch ${l.key(epoch)}")

  /** Whether `epoch`'s intents are recorded (it is committed, whatever Spark recorded). */
  def recorded(epoch: Long): Boolean = log_.exists(l => l.contains(location.get.key(epoch)))

  /** Sets a committed epoch's record aside, once a real-time batch of the same id wrote its
    * range again: a micro-batch of that id would otherwise write nothing.
    */
  def retire(epoch: Long): Unit = log_.foreach(_.retire(location.get.key(epoch)))

  /** An epoch that failed before its intents were recorded is rolled back; one recorded is
    * committed and completes when the query restarts.
    */
  def abort(epoch: Long, messages: Array[WriterCommitMessage]): Unit =
    if (log_.exists(_.contains(location.get.key(epoch))))
      logger.warn(s"epoch $epoch failed after its ACK intents were recorded; a restart completes it")
    else {
      messages.collect { case m: GazetteCommitMessage => m.rollbacks }.flatten.groupBy(_.journal).foreach {
        case (journal, rs) =>
          try client.append(journal, rs.map(_.intent).reduce(_ ++ _))
          catch { case NonFatal(e) => logger.warn(s"rolling back epoch $epoch in $journal: $e") }
      }
      for (loc <- location; id <- writeId)
        try StagingLocation.underCheckpoint(loc.checkpointLocation, batches = loc.batchId.isDefined).delete(
            s"${loc.key(epoch)}/$id", hadoopConf.value)
        catch { case NonFatal(e) => logger.warn(s"deleting the staged runs of epoch $epoch: $e") }
      // A write without intents is never run again to finish its appends: the registers of the
      // runs it was appending would stay on their journals for good.
      if (publishing.nonEmpty)
        try StagedRuns.forget(publishing, config)
        catch { case NonFatal(e) => logger.warn(s"removing the registers of ${describe(epoch)}'s staged runs: $e") }
      deleteUnrecordedRuns()
    }

  /** A journal deleted and created again while the epoch's tasks wrote it holds part of the
    * epoch (its small runs, prefixes) and would lose the rest (a staged run is never appended
    * to a journal other than the one it was written for): the epoch fails unrecorded, to run again.
    */
  private def refuseRecreated(epoch: Long, runs: Seq[StagedRun]): Unit =
    runs.map(r => r.journal -> r.revision).distinct.foreach { case (journal, revision) =>
      if (!client.list(s"name=$journal").headOption.exists(_.createRevision == revision))
        throw GazetteErrors.journalDeletedDuringWrite(journal, describe(epoch))
    }

  private def refuseUnwritable(messages: Array[WriterCommitMessage]): Unit = {
    val held = messages.toSeq.collect { case m: GazetteCommitMessage => m.unwritable }.flatten
      .groupBy(_._1).map { case (j, held) => j -> held.map(_._2).sum }
    if (held.nonEmpty) {
      val why = targets().unwritable
      throw GazetteErrors.unwritableJournals(held.toSeq.sorted.map { case (j, n) =>
        (j, n, why.getOrElse(j, "its content-type"))
      })
    }
  }

  private def acks(messages: Array[WriterCommitMessage]): Seq[(ProducerId, String, Long)] =
    messages.toSeq.collect { case m: GazetteCommitMessage =>
      val producer = ProducerId(java.lang.Long.parseUnsignedLong(m.producer, 16))
      m.intents.map(i => (producer, i.journal, i.clock)) ++ m.staged.map(r => (producer, r.journal, r.clock))
    }.flatten

  private def retried(messages: Array[WriterCommitMessage]): Seq[Int] =
    messages.toSeq.collect { case m: GazetteCommitMessage if !m.firstAttempt => m.partition }

  private def staged(messages: Array[WriterCommitMessage]): Seq[StagedRun] =
    messages.toSeq.collect { case m: GazetteCommitMessage => m.staged }.flatten

  private def collect(messages: Array[WriterCommitMessage]): Seq[AckIntent] =
    messages.toSeq.collect { case m: GazetteCommitMessage => m.intents }.flatten

  private def fault(point: String, epoch: Long): Unit =
    options.testFault.filter(f => f.point == point && f.epoch == epoch).foreach { _ =>
      throw new IllegalStateException(s"injected driver failure at $point of epoch $epoch")
    }
}

private[sink] object SinkDriver {
  private val logger = LoggerFactory.getLogger(classOf[SinkDriver])

  /** Names one run of a write's tasks (see [[StagingLocation]]). */
  def writeId(): String = java.util.UUID.randomUUID().toString.replace("-", "")
}
