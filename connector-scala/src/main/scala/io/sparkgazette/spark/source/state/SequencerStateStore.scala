package io.sparkgazette.spark
package source
package state

import java.io.FileNotFoundException
import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest
import java.util.UUID

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.source.offsets.{JournalPosition, JournalRange, StateRef}
import com.fasterxml.jackson.databind.ObjectMapper
import io.sparkgazette.message.{ProducerId, ProducerState}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, FileStatus, FileSystem, Path}

/** Sequencer states under the source's checkpoint directory (format 2):
  *
  * {{{
  *   <dir>/source.json                          {"format": 2}, written by the driver when the query starts
  *   <dir>/initial-offsets.json                 where the query began, kept for re-planning its first batch
  *   <dir>/batches/<end>/<task>.states          the states one task saved: every journal it read, at its end
  *   <dir>/forgotten/<hash>.json                files whose states of a journal read afresh are forgotten
  * }}}
  *
  * `<end>` names a batch by a hash of its end offsets, `<task>` a task by a hash of its ranges,
  * so that every attempt of a task, before and after a restart, names the same file. A states
  * file is binary: a header, an index (per state its journal, offset, revision, origin, resume
  * offset and where its producers lie) and the producers, 24 bytes each. It is written under a
  * temporary name and renamed only if absent: the first attempt to save a task's states wins.
  * The driver reads the indexes alone (see [[SequencerStateCatalog]]); a task reads the states
  * it starts from at the positions the driver hands it.
  *
  * A journal read afresh may enter the query again under the key of its earlier entry (the same
  * revision and origin: its head went back to where the query entered it). Its earlier states
  * stay in files that also hold other journals' states, so forgetting them is written down
  * (`forgotten/`): a driver that restarts reads every file again and must not find them.
  */
private[spark] final class SequencerStateStore(dir: String, conf: Configuration) {
  import SequencerStateStore._

  private val root = new Path(dir)
  private val batchesRoot = new Path(root, BatchesName)
  private val marker = new Path(root, MarkerName)
  private val forgottenRoot = new Path(root, ForgottenName)
  private lazy val fs: FileSystem = root.getFileSystem(conf)
  private val opened = mutable.Map[String, FSDataInputStream]()

  def location: String = dir

  /** Marks the directory as this source's, once; refuses one written in another format. */
  def initialize(): Unit =
    if (fs.exists(marker)) {
      val in = fs.open(marker)
      val text = try new String(in.readAllBytes(), UTF_8)
      finally in.close()
      val version = """"format"\s*:\s*(\d+)""".r.findFirstMatchIn(text).map(_.group(1).toInt)
      if (!version.contains(SequencerStateFormat.FormatVersion))
        throw GazetteErrors.unsupportedStateFormat(marker.toString, version, SequencerStateFormat.FormatVersion)
    } else {
      if (list(root).exists(s => !isTemporary(s.getPath.getName)))
        throw GazetteErrors.unsupportedStateFormat(dir, None, SequencerStateFormat.FormatVersion)
      writeOnce(marker, out => out.write(s"""{"format": ${SequencerStateFormat.FormatVersion}}""".getBytes(UTF_8)))
    }

  /** The text saved under `name` beside the states, written by `compute` the first time. */
  def once(name: String)(compute: => String): String = {
    val path = new Path(root, name)
    if (!fs.exists(path)) writeOnce(path, _.write(compute.getBytes(UTF_8)))
    val in = fs.open(path)
    try new String(in.readAllBytes(), UTF_8)
    finally in.close()
  }

  /** Whether this process sees the marker the driver wrote: a checkpoint location on a disk of
    * the driver's host alone looks empty from executors on other hosts.
    */
  def visible: Boolean = fs.exists(marker)

  /** The state `ref` points at. */
  def load(ref: StateRef): SequencerState = {
    val in = opened.getOrElseUpdate(ref.file, fs.open(new Path(root, ref.file)))
    val bytes = new Array[Byte](Math.multiplyExact(ref.producers, 24))
    // One stream per file, read in order: positional reads would open the file again each time.
    in.seek(ref.position)
    in.readFully(bytes)
    val buf = java.nio.ByteBuffer.wrap(bytes)
    val producers = new Array[ProducerState](ref.producers)
    var i = 0
    while (i < ref.producers) {
      producers(i) = ProducerState(ref.journal, ProducerId(buf.getLong()), buf.getLong(), buf.getLong())
      i += 1
    }
    SequencerState(ref.resume, producers.toSeq, ref.revision, ref.origin)
  }

  /** The index of the states file `file` (relative to the store's directory), or None if absent. */
  def index(file: String): Option[Seq[StateRef]] =
    try {
      val in = fs.open(new Path(root, file))
      try Some(SequencerStateFormat.readIndex(file, in))
      finally in.close()
    } catch { case _: FileNotFoundException => None }

  /** Saves a task's states as `file` unless an earlier attempt did; false if one did. */
  def save(file: String, states: Seq[(String, Long, SequencerState)]): Boolean =
    writeOnce(new Path(root, file), out => SequencerStateFormat.write(states, out))

  /** The states files of batch directory `batch` (`batches/<end>`), oldest first, as paths
    * relative to the store's directory; temporary files of attempts killed long ago are deleted.
    */
  def files(batch: String): Seq[String] = {
    val all = list(new Path(root, batch))
    all.filter(s =>
      isTemporary(s.getPath.getName) && s.getModificationTime < System.currentTimeMillis() - StaleTempMillis)
      .foreach(s => fs.delete(s.getPath, false))
    all.filter(s => s.isFile && s.getPath.getName.endsWith(Suffix) && !s.getPath.getName.startsWith("."))
      .sortBy(s => (s.getModificationTime, s.getPath.getName)).map(s => s"$batch/${s.getPath.getName}").toSeq
  }

  /** Writes down that the states of each `(file, journal)` of `states` are forgotten; returns the
    * record's name (relative to the store's directory).
    */
  def forget(states: Seq[ForgottenState]): String = {
    val node = mapper.createArrayNode()
    states.sortBy(s => (s.file, s.journal)).foreach(s => node.addObject().put("file", s.file).put("journal", s.journal))
    val text = mapper.writeValueAsString(node)
    val name = s"$ForgottenName/${digest(Iterator.single(text))}.json"
    writeOnce(new Path(root, name), _.write(text.getBytes(UTF_8)))
    name
  }

  /** The records [[forget]] wrote, by name; temporary files of writes killed long ago are deleted. */
  def forgotten(): Map[String, Seq[ForgottenState]] = {
    val all = list(forgottenRoot)
    all.filter(s =>
      isTemporary(s.getPath.getName) && s.getModificationTime < System.currentTimeMillis() - StaleTempMillis)
      .foreach(s => fs.delete(s.getPath, false))
    all.filter(s => s.isFile && s.getPath.getName.endsWith(".json") && !s.getPath.getName.startsWith(".")).map { s =>
      val in = fs.open(s.getPath)
      val tree =
        try mapper.readTree(in)
        finally in.close()
      val states = Option(tree).filter(_.isArray).map(_.elements().asScala.toList).flatMap(nodes =>
        scala.util.Try(nodes.map(n => ForgottenState(n.get("file").asText(), n.get("journal").asText()))).toOption)
      s"$ForgottenName/${s.getPath.getName}" ->
        states.getOrElse(throw new IllegalStateException(s"${s.getPath} is not a record of forgotten source states"))
    }.toMap
  }

  /** Whether `relative` (a file or directory under the store's directory) exists. */
  def exists(relative: String): Boolean = fs.exists(new Path(root, relative))

  /** Every batch directory, as `batches/<end>`. */
  def batches(): Seq[String] =
    list(batchesRoot).filter(_.isDirectory).map(s => s"$BatchesName/${s.getPath.getName}").toSeq.sorted

  /** Deletes a states file, or a batch directory with whatever is left in it. */
  def delete(relative: String): Unit = fs.delete(new Path(root, relative), true)

  /** Closes the files [[load]] opened. */
  def close(): Unit = {
    opened.values.foreach(in =>
      try in.close()
      catch { case NonFatal(_) => })
    opened.clear()
  }

  private def list(path: Path): Array[FileStatus] =
    try fs.listStatus(path)
    catch { case _: FileNotFoundException => Array.empty }

  // Creates `path` with what `body` writes, unless it exists; false if it did.
  private def writeOnce(path: Path, body: java.io.OutputStream => Unit): Boolean = {
    if (fs.exists(path)) return false
    fs.mkdirs(path.getParent)
    val tmp = new Path(path.getParent, s".${path.getName}.${UUID.randomUUID()}$TempSuffix")
    val out = fs.create(tmp, true)
    try body(out)
    catch { case NonFatal(e) => out.close(); fs.delete(tmp, false); throw e }
    out.close()
    // Rename replaces an existing file on some file systems: check first, and lose the race
    // only to an attempt that wrote the same states.
    val renamed = !fs.exists(path) && fs.rename(tmp, path)
    if (!renamed) {
      fs.delete(tmp, false)
      if (!fs.exists(path)) throw GazetteErrors.checkpointWriteFailed("the source's sequencer states", path.toString)
    }
    renamed
  }
}

/** A file whose states of `journal` are forgotten. */
private[state] final case class ForgottenState(file: String, journal: String)

private[spark] object SequencerStateStore {
  private val DirName = "sequencer"
  private val MarkerName = "source.json"

  /** Where the text of the query's first batch's start is kept, beside the states. */
  val InitialOffsetsName = "initial-offsets.json"
  val BatchesName = "batches"
  private val ForgottenName = "forgotten"
  private val mapper = new ObjectMapper()
  val Suffix = ".states"
  private val TempSuffix = ".tmp"
  private val StaleTempMillis = 10 * 60 * 1000L

  /** The states' directory of a source whose checkpoint location (Spark's `sources/<id>`) is `sourceCheckpoint`. */
  def dirOf(sourceCheckpoint: String): String = s"$sourceCheckpoint/$DirName"

  /** The place of the source whose states' directory is `dir` within its query's checkpoint
    * (`sources/<id>`): it names the source in every run, wherever the checkpoint was moved or
    * copied and whatever URI names it (`s3a://` or `s3://`).
    */
  def placeOf(dir: String): String = dir.stripSuffix(s"/$DirName").split('/').takeRight(2).mkString("/")

  /** Where a source whose checkpoint location is `sourceCheckpoint` keeps [[InitialOffsetsName]]. */
  def initialOffsetsOf(sourceCheckpoint: String): String = s"${dirOf(sourceCheckpoint)}/$InitialOffsetsName"

  private def isTemporary(name: String): Boolean = name.startsWith(".") && name.endsWith(TempSuffix)

  /** The directory of the batch ending at `end`: a hash of its end offsets. */
  def batchDir(end: Map[String, JournalPosition]): String =
    s"$BatchesName/${digest(end.toSeq.sortBy(_._1).iterator.map { case (j, p) =>
        s"${j}\u0000${p.offset}\u0000${p.revision}\u0000${p.origin}"
      })}"

  /** The file of a task reading `ranges` in batch directory `batch`. */
  def taskFile(batch: String, ranges: Seq[JournalRange]): String =
    s"$batch/${digest(ranges.sortBy(r => (r.journal, r.piece.fold(r.start)(_.from))).iterator.map(r =>
          s"${r.journal}\u0000${r.start}\u0000${r.end}\u0000${r.revision}\u0000${r.origin}" +
            r.piece.fold("")(p => s"\u0000${p.from}\u0000${p.until}")))}$Suffix"

  private def digest(parts: Iterator[String]): String = {
    val md = MessageDigest.getInstance("SHA-256")
    parts.foreach { p => md.update(p.getBytes(UTF_8)); md.update('\n'.toByte) }
    md.digest().take(12).map(b => f"${b & 0xff}%02x").mkString
  }
}
