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
  */
final case class StagedRun(journal: String, path: String, bytes: Long, producer: String, clock: Long, token: String,
    revision: Long, quietAck: Array[Byte])

/** Where a write's runs are staged: `<checkpointLocation>/gazette-sink/staging/epochs/<epoch>/`
  * for a stream, `.../staging/batches/<batchId>/` for a batch job, then a directory per run of
  * the write (`writeId`, drawn by the driver), so that two runs of one epoch or batch (a zombie
  * driver, a batch run twice at once) never write the same files.
  */
final case class StagingLocation(checkpointLocation: String, batches: Boolean) {
  private val root = new Path(checkpointLocation, s"gazette-sink/staging/${if (batches) "batches" else "epochs"}")

  def dir(key: String): Path = new Path(root, key)

  /** The file of one task attempt's run in the `index`th journal of the write's targets. */
  def file(key: String, writeId: String, partition: Int, stageAttempt: Int, attempt: Int, index: Int): Path =
    new Path(new Path(dir(key), writeId), s"$partition-$stageAttempt-$attempt-$index.run")

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

/** A staged run being written by a task. */
private[spark] final class StagedRunWriter(path: Path, conf: Configuration) {
  // On the local file system, without Hadoop's .crc files: a staged run is read once, by
  // mapping it, and its length is checked against the record.
  private val out: FSDataOutputStream = (path.getFileSystem(conf) match {
    case l: LocalFileSystem => l.getRawFileSystem
    case fs                 => fs
  }).create(path, false)
  private var written = 0L

  def write(bytes: Array[Byte]): Unit = { out.write(bytes); written += bytes.length }

  /** Closes the file, synced: it is recorded as committed next. */
  def close(journal: String, producer: String, clock: Long, revision: Long, quietAck: Array[Byte]): StagedRun = {
    out.hsync()
    out.close()
    StagedRun(journal, path.toString, written, producer, clock, s"${path.getParent.getName}.${path.getName.stripSuffix(".run")}",
      revision, quietAck)
  }

  def discard(): Unit = {
    try out.close() catch { case NonFatal(_) => }
    try path.getFileSystem(conf).delete(path, false) catch { case NonFatal(_) => }
  }
}

object StagedRuns {
  private val log = LoggerFactory.getLogger(classOf[StagedRun])

  /** Appends every run, each in one append, from the cluster's executors. */
  def publish(sc: SparkContext, runs: Seq[StagedRun], config: SinkConfig, description: String): Unit = if (runs.nonEmpty) {
    val previous = sc.getLocalProperty("spark.job.description")
    sc.setJobDescription(description)
    try {
      val publishOne = (it: Iterator[StagedRun]) => it.foreach(publish(_, config))
      sc.runJob(sc.parallelize(runs, runs.size), publishOne)
    } finally sc.setJobDescription(previous)
  }

  /** Fails, naming the checkpoint, unless the driver sees every run as its task wrote it: a
    * checkpoint on a file system the hosts do not share would strand recorded runs on
    * executors' disks.
    */
  def verify(runs: Seq[StagedRun], checkpointLocation: String, conf: Configuration): Unit =
    runs.find { r =>
      val p = new Path(r.path)
      val fs = p.getFileSystem(conf)
      !fs.exists(p) || fs.getFileStatus(p).getLen != r.bytes
    }.foreach { r =>
      throw new IllegalStateException(s"The staged run of journal ${r.journal} that a task wrote at ${r.path} cannot be seen " +
        s"from the driver: the checkpoint location $checkpointLocation must be on a file system that the driver and every " +
        "executor share (HDFS, an object store, a shared mount). Nothing of this epoch was committed.")
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
      try appendUnlessDeleted(client, journal, ByteString.copyFrom(rs.head.quietAck), "the cleanup of staged runs",
        AppendRequest(subtractRegisters = Some(registers(rs))))
      catch { case NonFatal(e) => log.warn(s"removing the staged runs' registers from $journal: $e") }
    }
  }

  /** A register per producer, holding the token of its latest run in the journal: a union
    * replaces a name's values, so a journal holds one per producer that published there, and a
    * producer has one run per journal in a write.
    */
  private def registers(runs: Seq[StagedRun]): LabelSet =
    LabelSet(runs.map(r => Label(s"gazette-sink/${r.producer}", r.token)).distinct.sortBy(l => (l.name, l.value)))

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
  private def withContent[T](fs: FileSystem, path: Path)(f: ByteString => T): T = {
    val (file, temporary) = fs match {
      case l: LocalFileSystem    => (l.pathToFile(path).toPath, false)
      case r: RawLocalFileSystem => (r.pathToFile(path).toPath, false)
      case _ =>
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
