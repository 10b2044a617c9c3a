package io.sparkgazette.spark

import java.nio.channels.FileChannel
import java.nio.file.{Files, StandardOpenOption}

import scala.util.control.NonFatal

import com.google.protobuf.{ByteString, UnsafeByteOperations}
import io.sparkgazette.client.{BrokerStatusException, GazetteClient}
import io.sparkgazette.client.protocol.{AppendRequest, Label, LabelSelector, LabelSet, Status}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataOutputStream, FileSystem, LocalFileSystem, Path, RawLocalFileSystem}
import org.apache.spark.SparkContext
import org.slf4j.LoggerFactory

/** One task's messages to one journal, staged under the checkpoint rather than appended by the
  * task: committed (OUTSIDE_TXN) messages that only the driver's commit makes anyone append.
  *
  * Why: the driver appends a stream's ACKs after every task's run, so a read-committed reader
  * holds every run of an epoch in its ring until the ACKs come; an epoch larger than the ring
  * (Gazette's default: 8,192 messages) is replayed from each run to its ACK, several times
  * over. A staged run is appended after the epoch is recorded, so its messages need no ACK and
  * readers never hold them. Appending one again (a publish retried, a driver restarted) is
  * done at most once whatever readers remember: the append checks that the journal's register
  * for the run's producer does not hold the run's `token` and sets it, so that a second append
  * of the run (a publish retried, a driver restarted) fails with REGISTER_MISMATCH and is skipped.
  *
  * @param clock    the clock of the run's last message: where its producer stands in `journal`
  * @param token    the run's name among the journal's registers while it is published
  * @param revision the Etcd revision that created `journal`: a journal re-created since gets nothing
  * @param quietAck an ACK at `clock`, which readers ignore once they have read the run: the
  *                 bytes the cleanup append carries (an append must carry some)
  * @param part     which part of the task's run in `journal` this is (see [[StagedRunWriter]])
  */
final case class StagedRun(journal: String, path: String, bytes: Long, producer: String, clock: Long, token: String,
    revision: Long, quietAck: Array[Byte], part: Int = 0)

/** Where a write's runs are staged: `<checkpointLocation>/gazette-sink/staging/epochs/<epoch>/`
  * for a stream, `.../staging/batches/<batchId>/` for a batch job, then a directory per run of
  * the write (`writeId`, drawn by the driver), so that two runs of one epoch or batch (a zombie
  * driver, a batch run twice at once) never write the same files.
  */
final case class StagingLocation(checkpointLocation: String, batches: Boolean) {
  private val root = new Path(checkpointLocation, s"gazette-sink/staging/${if (batches) "batches" else "epochs"}")

  def dir(key: String): Path = new Path(root, key)

  /** The files of one task attempt's run in the `index`th journal of the write's targets, less
    * their `.<part>.run` suffix.
    */
  def file(key: String, writeId: String, partition: Int, stageAttempt: Int, attempt: Int, index: Int): Path =
    new Path(new Path(dir(key), writeId), s"$partition-$stageAttempt-$attempt-$index")

  /** Deletes the staged runs of `key` (published, or of a write rolled back). */
  def delete(key: String, conf: Configuration): Unit = {
    val d = dir(key)
    val fs = d.getFileSystem(conf)
    if (fs.exists(d)) fs.delete(d, true)
  }

  /** Deletes the staged runs of the epochs before `epoch`: committed or abandoned, all of them. */
  def deleteBefore(epoch: Long, conf: Configuration): Unit = {
    val fs = root.getFileSystem(conf)
    if (fs.exists(root))
      fs.listStatus(root).map(_.getPath).filter(_.getName.toLongOption.exists(_ < epoch)).foreach(fs.delete(_, true))
  }
}

/** How large a task's run in a journal may grow before it is staged rather than appended:
  * the runs a task appends itself, all of an epoch's tasks together, must fit in half a reader's
  * ring, in messages (`readerRingSize`) and in bytes (the source's default ring of 64 MiB).
  */
final case class StagingThreshold(messages: Long, bytes: Long)

object StagingThreshold {
  private val ReaderRingBytes = 64L << 20

  def apply(readerRingSize: Int, partitions: Int): StagingThreshold = {
    val share = 2L * math.max(partitions, 1)
    StagingThreshold(math.max(1L, readerRingSize / share), math.max(64L << 10, ReaderRingBytes / share))
  }
}

/** One task attempt's staged run in one journal, as it is written: in parts of at most
  * [[StagedRunWriter.PartBytes]], each appended on its own (a part is whole messages, and one
  * append of protobuf's ByteString must stay below 2 GiB).
  *
  * @param base  the parts' path without its `.<part>.run` suffix
  * @param token the run's name in its journal's registers, unique to the write's run (see [[StagedRun]])
  */
private[spark] final class StagedRunWriter(base: Path, token: String, conf: Configuration,
    partBytes: Long = StagedRunWriter.PartBytes) {
  private val parts = scala.collection.mutable.ArrayBuffer[(Path, Long, Long)]() // path, bytes, last clock
  private var out: FSDataOutputStream = _
  private var path: Path = _
  private var written = 0L

  /** Appends whole messages, the last of which has `clock`. */
  def write(bytes: Array[Byte], clock: Long): Unit = write(bytes, 0, bytes.length, clock)

  /** Appends whole messages, `bytes[offset, offset + length)`, the last of which has `clock`. */
  def write(bytes: Array[Byte], offset: Int, length: Int, clock: Long): Unit = {
    if (out == null) {
      path = new Path(base.getParent, s"${base.getName}.${parts.size}.run")
      // On the local file system, without Hadoop's .crc files: a staged run is read once, by
      // mapping it, and its length is checked against the record.
      out = (path.getFileSystem(conf) match {
        case l: LocalFileSystem => l.getRawFileSystem
        case fs                 => fs
      }).create(path, false)
      written = 0
    }
    out.write(bytes, offset, length)
    written += length
    if (written >= partBytes) closePart(clock)
  }

  private def closePart(clock: Long): Unit = {
    // On disk before the driver records it: a record that outlives its part's bytes (a crash
    // of the host) would name a run nobody can publish.
    out.hsync()
    out.close()
    out = null
    parts += ((path, written, clock))
  }

  /** The run's parts, closed and synced. `quietAck(clock)` is an ACK at `clock`. */
  def close(journal: String, producer: String, clock: Long, revision: Long, quietAck: Long => Array[Byte]): Seq[StagedRun] = {
    if (out != null) closePart(clock)
    parts.toSeq.zipWithIndex.map { case ((p, bytes, last), i) =>
      StagedRun(journal, p.toString, bytes, producer, last, s"$token.$i", revision, quietAck(last), i)
    }
  }

  def discard(): Unit = {
    if (out != null) try out.close() catch { case NonFatal(_) => }
    (parts.map(_._1) ++ Option(path)).distinct.foreach(p => try p.getFileSystem(conf).delete(p, false) catch { case NonFatal(_) => })
  }
}

object StagedRunWriter {
  val PartBytes: Long = 256L << 20
}

object StagedRuns {
  private val log = LoggerFactory.getLogger(classOf[StagedRun])

  /** Appends every run, each in one append, from the cluster's executors. */
  def publish(sc: SparkContext, runs: Seq[StagedRun], config: SinkConfig, description: String): Unit = if (runs.nonEmpty) {
    val previous = sc.getLocalProperty("spark.job.description")
    sc.setJobDescription(description)
    try {
      // A producer's parts in a journal go in order, by one task: readers drop a committed
      // message whose clock is below one they already read from the producer.
      val inOrder = runs.groupBy(r => (r.journal, r.producer)).values.map(_.sortBy(_.part)).toSeq.sortBy(_.head.path)
      // Appends wait on brokers, not on cores: a task per core, each appending several journals at once.
      val tasks = math.max(1, math.min(inOrder.size, sc.defaultParallelism))
      val slices = inOrder.zipWithIndex.groupBy(_._2 % tasks).values.map(_.map(_._1)).toSeq
      val publishAll = (it: Iterator[Seq[Seq[StagedRun]]]) => it.foreach(publishConcurrently(_, config))
      sc.runJob(sc.parallelize(slices, slices.size), publishAll)
    } finally sc.setJobDescription(previous)
  }

  /** Appends `groups` (each a producer's parts in a journal, in order), up to
    * [[PublishThreads]] journals at a time where parts are mapped in place (a local or mounted
    * checkpoint), one at a time where each is first copied to local disk; fails with the first
    * failure once all have stopped.
    */
  private def publishConcurrently(groups: Seq[Seq[StagedRun]], config: SinkConfig): Unit = {
    val byJournal = groups.groupBy(_.head.journal).values.toSeq
    val first = new Path(groups.head.head.path)
    val mapped = localFile(first.getFileSystem(config.hadoopConf.value), first).isDefined
    val pool = java.util.concurrent.Executors.newFixedThreadPool(math.min(if (mapped) PublishThreads else 1, byJournal.size))
    try {
      val pending = byJournal.map(journalGroups => pool.submit(new java.util.concurrent.Callable[Unit] {
        override def call(): Unit = journalGroups.foreach(_.foreach(publish(_, config)))
      }))
      val failures = pending.flatMap { f =>
        try { f.get(); None }
        catch { case e: java.util.concurrent.ExecutionException => Some(e.getCause) }
      }
      failures.headOption.foreach { e => failures.tail.foreach(e.addSuppressed); throw e }
    } finally pool.shutdownNow()
  }

  /** How many journals a publishing task appends at once. */
  private val PublishThreads = 4

  /** Fails, naming the checkpoint, unless the driver sees every run as its task wrote it: a
    * checkpoint on a file system the hosts do not share would strand recorded runs on
    * executors' disks.
    */
  def verify(runs: Seq[StagedRun], checkpointLocation: String, conf: Configuration): Unit = {
    // One listing per directory (a write's run): object stores answer those faster than a
    // request per file.
    val seen = runs.map(r => new Path(r.path).getParent).distinct.flatMap { dir =>
      val fs = dir.getFileSystem(conf)
      val listed = try fs.listStatus(dir).toSeq catch { case _: java.io.FileNotFoundException => Nil }
      listed.map(st => st.getPath.getName -> st.getLen)
    }.toMap
    runs.find(r => !seen.get(new Path(r.path).getName).contains(r.bytes)).foreach { r =>
      throw new IllegalStateException(s"The staged run of journal ${r.journal} that a task wrote at ${r.path} cannot be seen " +
        s"from the driver: the checkpoint location $checkpointLocation must be on a file system that the driver and every " +
        "executor share (HDFS, an object store, a shared mount). Nothing of this epoch was committed.")
    }
  }

  /** Appends one run, once: see [[StagedRun]]. */
  def publish(run: StagedRun, config: SinkConfig): Unit = {
    val client = ClientCache(config.client)
    val current = client.list(s"name=${run.journal}").headOption
    if (!current.exists(_.createRevision == run.revision)) {
      log.warn(s"journal ${run.journal} was deleted${if (current.isDefined) " and created again" else ""} since " +
        s"a staged run of producer ${run.producer} was recorded for it: the run is skipped, gone with the journal it was for")
      return
    }
    val path = new Path(run.path)
    val fs = path.getFileSystem(config.hadoopConf.value)
    val length = if (fs.exists(path)) fs.getFileStatus(path).getLen else -1L
    if (length != run.bytes)
      throw new IllegalStateException(s"The staged run of journal ${run.journal} at ${run.path} is " +
        (if (length < 0) "missing" else s"$length bytes long, not ${run.bytes}") + ": its messages were recorded as " +
        "committed and cannot be published. Was the checkpoint location modified?")
    val first = AppendRequest(checkRegisters = Some(LabelSelector(exclude = Some(registers(Seq(run))))),
      unionRegisters = Some(registers(Seq(run))))
    withContent(fs, path) { content =>
      try appendUnlessDeleted(client, run.journal, content, s"a staged run of producer ${run.producer}", first)
      catch {
        case e: BrokerStatusException if e.status == Status.REGISTER_MISMATCH =>
          log.info(s"a staged run of producer ${run.producer} in ${run.journal} was appended before; it is not appended again")
      }
    }
  }

  /** Removes the published runs' registers from their journals: one append per journal,
    * carrying an ACK that readers ignore. For batch jobs, whose producers are new each time; a
    * stream's producers replace their own register with every run.
    */
  def forget(runs: Seq[StagedRun], config: SinkConfig): Unit = {
    val client = ClientCache(config.client)
    runs.groupBy(_.journal).foreach { case (journal, rs) =>
      // An ACK at a producer's last clock there, where readers stand once they read its runs
      // (an ACK below it would lower their clock for the producer).
      val last = rs.filter(_.producer == rs.head.producer).maxBy(_.clock)
      try appendUnlessDeleted(client, journal, ByteString.copyFrom(last.quietAck), "the cleanup of staged runs",
        AppendRequest(subtractRegisters = Some(registers(rs))))
      catch { case NonFatal(e) => log.warn(s"removing the staged runs' registers from $journal: $e") }
    }
  }

  /** A register per producer and part, holding the token of its latest run's part in the
    * journal: a union replaces a name's values, so a journal holds one per producer and part
    * that published there, and a producer has one run per journal in a write.
    */
  private def registers(runs: Seq[StagedRun]): LabelSet =
    LabelSet(runs.map(r => Label(s"gazette-sink/${r.producer}/${r.part}", r.token)).distinct.sortBy(l => (l.name, l.value)))

  /** Appends `content`; a journal deleted meanwhile is skipped, as Gazette's consumers skip the
    * ACK intents of journals that no longer exist. List confirms the deletion: a broker that has
    * not yet heard of a new journal says JOURNAL_NOT_FOUND too.
    */
  def appendUnlessDeleted(client: GazetteClient, journal: String, content: ByteString, what: String,
      first: AppendRequest = AppendRequest()): Unit =
    try client.append(journal, content, first)
    catch {
      case e: BrokerStatusException if e.status == Status.JOURNAL_NOT_FOUND && client.list(s"name=$journal").isEmpty =>
        log.warn(s"journal $journal no longer exists: $what for it is skipped, and what it held is gone with it")
    }

  /** The file's bytes without reading them onto the heap: mapped where the file system is
    * local, else copied to a local file first.
    */
  /** Where `path` is on this host's disk, when `fs` is the local file system: there, runs are mapped in place. */
  private def localFile(fs: FileSystem, path: Path): Option[java.nio.file.Path] = fs match {
    case l: LocalFileSystem    => Some(l.pathToFile(path).toPath)
    case r: RawLocalFileSystem => Some(r.pathToFile(path).toPath)
    case _                     => None
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
      val content = Iterator.range(0L, size, MapBytes).map { at =>
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
