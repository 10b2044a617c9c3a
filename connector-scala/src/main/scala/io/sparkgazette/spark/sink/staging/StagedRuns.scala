package io.sparkgazette.spark
package sink
package staging

import java.nio.channels.FileChannel
import java.nio.file.{Files, StandardOpenOption}

import scala.util.control.NonFatal

import io.sparkgazette.client.protocol.{AppendRequest, Label, LabelSelector, LabelSet, Status}
import io.sparkgazette.client.{BrokerStatusException, GazetteClient}
import io.sparkgazette.spark.clients.ClientCache
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.sink.config.SinkConfig
import io.sparkgazette.spark.sink.intents.StagedRun
import io.sparkgazette.spark.sink.metrics.{SinkCounts, SinkMetrics}
import com.google.protobuf.{ByteString, UnsafeByteOperations}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, LocalFileSystem, Path, RawLocalFileSystem}
import org.apache.spark.SparkContext
import org.slf4j.LoggerFactory

private[sink] object StagedRuns {
  private val log = LoggerFactory.getLogger(classOf[StagedRun])

  /** Appends every run, each in one append, from the cluster's executors; counts the appends. */
  def publish(sc: SparkContext, runs: Seq[StagedRun], config: SinkConfig, description: String): SinkCounts =
    if (runs.isEmpty) SinkCounts.Zero
    else {
      val previous = sc.getLocalProperty("spark.job.description")
      sc.setJobDescription(description)
      try {
        // A producer's parts in a journal go in order, by one task: readers drop a committed
        // message whose clock is below one they already read from the producer.
        val inOrder = runs.groupBy(r => (r.journal, r.producer)).values.map(_.sortBy(_.part)).toSeq.sortBy(_.head.path)
        // Appends wait on brokers, not on cores: a task per core, each appending several journals at once.
        val tasks = math.max(1, math.min(inOrder.size, sc.defaultParallelism))
        val slices = inOrder.zipWithIndex.groupBy(_._2 % tasks).values.map(_.map(_._1)).toSeq
        val publishAll =
          (it: Iterator[Seq[Seq[StagedRun]]]) => SinkCounts.sum(it.map(publishConcurrently(_, config)).toList)
        SinkCounts.sum(sc.runJob(sc.parallelize(slices, slices.size), publishAll))
      } finally sc.setJobDescription(previous)
    }

  /** Appends `groups` (each a producer's parts in a journal, in order), up to
    * [[PublishThreads]] journals at a time where parts are mapped in place (a local or mounted
    * checkpoint), one at a time where each is first copied to local disk; fails with the first
    * failure once all have stopped.
    */
  private def publishConcurrently(groups: Seq[Seq[StagedRun]], config: SinkConfig): SinkCounts = {
    val byJournal = groups.groupBy(_.head.journal).values.toVector
    val first = new Path(groups.head.head.path)
    val mapped = localFile(first.getFileSystem(config.hadoopConf.value), first).isDefined
    val pool =
      java.util.concurrent.Executors.newFixedThreadPool(math.min(if (mapped) PublishThreads else 1, byJournal.size))
    try {
      val pending = byJournal.map(journalGroups =>
        pool.submit(new java.util.concurrent.Callable[Seq[Option[Long]]] {
          override def call(): Seq[Option[Long]] = journalGroups.flatMap(_.map(publish(_, config)))
        }))
      val results = pending.map { f =>
        try Right(f.get())
        catch { case e: java.util.concurrent.ExecutionException => Left(e.getCause) }
      }
      val failures = results.collect { case Left(e) => e }
      failures.headOption.foreach { e => failures.tail.foreach(e.addSuppressed); throw e }
      val appended = results.collect { case Right(bytes) => bytes }.flatten.flatten
      SinkCounts.of(SinkMetrics.Appends -> appended.size.toLong, SinkMetrics.BytesAppended -> appended.sum)
    } finally pool.shutdownNow()
  }

  /** How many journals a publishing task appends at once. */
  private val PublishThreads = 4

  /** Fails, naming where the runs are staged (`location`, given as `option`), unless the driver
    * sees every run as its task wrote it: a location on a file system the hosts do not share
    * would strand runs on executors' disks.
    */
  def verify(runs: Seq[StagedRun], location: String, option: String, conf: Configuration): Unit = {
    // One listing per directory (a write's run): object stores answer those faster than a
    // request per file.
    val seen = runs.map(r => new Path(r.path).getParent).distinct.flatMap { dir =>
      val fs = dir.getFileSystem(conf)
      val listed = try fs.listStatus(dir).toSeq
      catch { case _: java.io.FileNotFoundException => Nil }
      listed.map(st => st.getPath.getName -> st.getLen)
    }.toMap
    runs.find(r => !seen.get(new Path(r.path).getName).contains(r.bytes)).foreach { r =>
      throw GazetteErrors.stagedRunNotVisible(r.journal, r.path, location, option)
    }
  }

  /** Appends one run, once (see [[StagedRun]]): the bytes appended, none where it is not. */
  def publish(run: StagedRun, config: SinkConfig): Option[Long] = {
    val client = ClientCache(config.client)
    val current = client.list(s"name=${run.journal}").headOption
    if (!current.exists(_.createRevision == run.revision)) {
      log.warn(s"journal ${run.journal} was deleted${if (current.isDefined) " and created again" else ""} since " +
        s"a staged run of producer ${run.producer} was recorded for it: the run is skipped, gone with the journal it was for")
      return None
    }
    val path = new Path(run.path)
    val fs = path.getFileSystem(config.hadoopConf.value)
    val length = if (fs.exists(path)) fs.getFileStatus(path).getLen else -1L
    if (length != run.bytes)
      throw GazetteErrors.stagedRunDamaged(run.journal, run.path, length, run.bytes)
    val first = AppendRequest(checkRegisters = Some(LabelSelector(exclude = Some(registers(Seq(run))))),
      unionRegisters = Some(registers(Seq(run))))
    withContent(fs, path) { content =>
      try
        if (appendUnlessDeleted(client, run.journal, content, s"a staged run of producer ${run.producer}", first))
          Some(content.size.toLong)
        else None
      catch {
        case e: BrokerStatusException if e.status == Status.REGISTER_MISMATCH =>
          log.info(
            s"a staged run of producer ${run.producer} in ${run.journal} was appended before; it is not appended again")
          None
      }
    }
  }

  /** Removes the published runs' registers from their journals: one append per journal,
    * carrying an ACK that readers ignore. For batch jobs, whose producers are new each time; a
    * stream's producers replace their own register with every run.
    */
  def forget(runs: Seq[StagedRun], config: SinkConfig): SinkCounts = {
    val client = ClientCache(config.client)
    SinkCounts.sum(runs.groupBy(_.journal).toList.map { case (journal, rs) =>
      // An ACK at a producer's last clock there, where readers stand once they read its runs
      // (an ACK below it would lower their clock for the producer).
      val last = rs.filter(_.producer == rs.head.producer).maxBy(_.clock)
      try
        if (appendUnlessDeleted(client, journal, ByteString.copyFrom(last.quietAck), "the cleanup of staged runs",
            AppendRequest(subtractRegisters = Some(registers(rs)))))
          SinkCounts.of(SinkMetrics.Appends -> 1L, SinkMetrics.BytesAppended -> last.quietAck.length.toLong)
        else SinkCounts.Zero
      catch {
        case NonFatal(e) =>
          log.warn(s"removing the staged runs' registers from $journal: $e")
          SinkCounts.Zero
      }
    })
  }

  /** A register per producer and part, holding the token of its latest run's part in the
    * journal: a union replaces a name's values, so a journal holds one per producer and part
    * that published there, and a producer has one run per journal in a write.
    */
  private def registers(runs: Seq[StagedRun]): LabelSet =
    LabelSet(
      runs.map(r => Label(s"gazette-sink/${r.producer}/${r.part}", r.token)).distinct.sortBy(l => (l.name, l.value)))

  /** Appends `content` (true), or skips a journal deleted meanwhile (false), as Gazette's consumers skip the
    * ACK intents of journals that no longer exist. List confirms the deletion: a broker that has
    * not yet heard of a new journal says JOURNAL_NOT_FOUND too.
    */
  def appendUnlessDeleted(client: GazetteClient, journal: String, content: ByteString, what: String,
      first: AppendRequest = AppendRequest()): Boolean =
    try { client.append(journal, content, first); true }
    catch {
      case e: BrokerStatusException if e.status == Status.JOURNAL_NOT_FOUND && client.list(s"name=$journal").isEmpty =>
        log.warn(s"journal $journal no longer exists: $what for it is skipped, and what it held is gone with it")
        false
    }

  /** The file's bytes without reading them onto the heap: mapped where the file system is
    * local, else copied to a local file first.
    */
  /** Where `path` is on this host's disk, when `fs` is the local file system: there, runs are mapped in place. */
  private def localFile(fs: FileSystem, path: Path): Option[java.nio.file.Path] = fs match {
    case l: LocalFileSystem => Some(l.pathToFile(path).toPath)
    case r: RawLocalFileSystem => Some(r.pathToFile(path).toPath)
    case _ => None
  }

  private def withContent[T](fs: FileSystem, path: Path)(f: ByteString => T): T = {
    val (file, temporary) = localFile(fs, path) match {
      case Some(local) => (local, false)
      case None =>
        val tmp = Files.createTempFile("gazette-staged-", ".run")
        try fs.copyToLocalFile(false, path, new Path(tmp.toUri), true)
        catch { case e: Throwable => Files.deleteIfExists(tmp); throw e }
        (tmp, true)
    }
    val channel = FileChannel.open(file, StandardOpenOption.READ)
    try {
      val size = channel.size()
      val content = (0L until size by MapBytes).iterator.map { at =>
        UnsafeByteOperations.unsafeWrap(channel.map(FileChannel.MapMode.READ_ONLY, at, math.min(MapBytes, size - at)))
      }.foldLeft(ByteString.EMPTY)(_.concat(_))
      f(content)
    } finally {
      channel.close()
      if (temporary) Files.deleteIfExists(file)
    }
  }

  private val MapBytes: Long = 1L << 30
}
