package io.sparkgazette.spark

import java.io.OutputStream
import java.nio.channels.FileChannel
import java.nio.file.{Files, StandardOpenOption}

import scala.util.control.NonFatal

import com.google.protobuf.{ByteString, UnsafeByteOperations}
import io.sparkgazette.client.{BrokerStatusException, GazetteClient}
import io.sparkgazette.client.protocol.Status
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, LocalFileSystem, Path, RawLocalFileSystem}
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
  * harmless: readers drop messages at or below a producer's last committed clock.
  *
  * @param clock the clock of the run's last message: where its producer stands in `journal`
  */
final case class StagedRun(journal: String, path: String, bytes: Long, producer: String, clock: Long)

/** Where a write's runs are staged: `<checkpointLocation>/gazette-sink/staging/epochs/<epoch>/`
  * for a stream, `.../staging/batches/<batchId>/` for a batch job.
  */
final case class StagingLocation(checkpointLocation: String, batches: Boolean) {
  private val root = new Path(checkpointLocation, s"gazette-sink/staging/${if (batches) "batches" else "epochs"}")

  def dir(key: String): Path = new Path(root, key)

  /** The file of one task attempt's run in the `index`th journal of the write's targets. */
  def file(key: String, partition: Int, stageAttempt: Int, attempt: Int, index: Int): Path =
    new Path(dir(key), s"$partition-$stageAttempt-$attempt-$index.run")

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
  private val out: OutputStream = path.getFileSystem(conf).create(path, true)
  private var written = 0L

  def write(bytes: Array[Byte]): Unit = { out.write(bytes); written += bytes.length }

  def close(journal: String, producer: String, clock: Long): StagedRun = {
    out.close()
    StagedRun(journal, path.toString, written, producer, clock)
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

  /** Appends one run. A run whose file is gone fails, naming it: it was recorded, so it was
    * staged, and nothing else deletes it before its write is marked published.
    */
  def publish(run: StagedRun, config: SinkConfig): Unit = {
    val path = new Path(run.path)
    val fs = path.getFileSystem(config.hadoopConf.value)
    if (!fs.exists(path))
      throw new IllegalStateException(s"The staged run of journal ${run.journal} at ${run.path} is missing: its messages " +
        "were recorded as committed and cannot be published. Was the checkpoint location modified?")
    withContent(fs, path) { content =>
      appendUnlessDeleted(ClientCache(config.client), run.journal, content, s"a staged run of producer ${run.producer}")
    }
  }

  /** Appends `content`; a journal deleted meanwhile is skipped, as Gazette's consumers skip the
    * ACK intents of journals that no longer exist. List confirms the deletion: a broker that has
    * not yet heard of a new journal says JOURNAL_NOT_FOUND too.
    */
  def appendUnlessDeleted(client: GazetteClient, journal: String, content: ByteString, what: String): Unit =
    try client.append(journal, content)
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
        fs.copyToLocalFile(false, path, new Path(tmp.toUri), true)
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
