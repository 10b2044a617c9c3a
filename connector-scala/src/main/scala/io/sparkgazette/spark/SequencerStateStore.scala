package io.sparkgazette.spark

import java.io.{BufferedOutputStream, DataOutputStream, FileNotFoundException}
import java.net.{URLDecoder, URLEncoder}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import scala.util.control.NonFatal

import io.sparkgazette.message.{ProducerId, ProducerState}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}

/** A journal's read-committed state at a batch boundary `offset`: where reading resumes (the end
  * of the last message that ends at or before `offset`) and its producers' states. `revision`
  * and `origin` name the journal's entry into the query (see [[JournalPosition]]): a state an
  * earlier entry left behind, say by an attempt still running when the journal was read afresh,
  * is not this entry's.
  */
final case class SequencerState(resume: Long, producers: Seq[ProducerState], revision: Long = 0L, origin: Long = -1L)

/** Sequencer states by (journal, offset) under the source's checkpoint directory:
  *
  * {{{
  *   <dir>/source.json                      written by the driver when the query starts
  *   <dir>/initial-offsets.json             where the query began, kept for re-planning its first batch
  *   <dir>/journals/<journal>/<offset>.state
  * }}}
  *
  * A state file is binary, headed by its format version, and written under a temporary name
  * then renamed, so that a reader sees all of a state or none. The task of a batch
  * `[start, end)` reads the state at `start` (or rebuilds it from an earlier one) and writes the
  * one at `end`, unless it exists: the first state written at an offset is the one every later
  * attempt agrees with. The driver prunes all but the newest state at or below the committed
  * offsets, so that a batch nobody read to its end never leaves the next one without a base.
  */
final class SequencerStateStore(dir: String, conf: Configuration) {
  import SequencerStateStore._

  private val root = new Path(dir)
  private val journalsRoot = new Path(root, "journals")
  private val marker = new Path(root, MarkerName)
  private lazy val fs: FileSystem = root.getFileSystem(conf)

  def location: String = dir

  /** Marks the directory as this source's, once; refuses one written in another format. */
  def initialize(): Unit =
    if (fs.exists(marker)) {
      val in = fs.open(marker)
      val text = try new String(in.readAllBytes(), UTF_8) finally in.close()
      val version = """"format"\s*:\s*(\d+)""".r.findFirstMatchIn(text).map(_.group(1).toInt)
      if (!version.contains(FormatVersion)) throw GazetteErrors.unsupportedStateFormat(marker.toString, version)
    } else {
      if (list(root).exists(s => !isTemporary(s.getPath.getName))) throw GazetteErrors.unsupportedStateFormat(dir, None)
      writeOnce(marker, out => out.write(s"""{"format": $FormatVersion}""".getBytes(UTF_8)))
    }

  /** The text saved under `name` beside the states, written by `compute` the first time. */
  def once(name: String)(compute: => String): String = {
    val path = new Path(root, name)
    if (!fs.exists(path)) writeOnce(path, _.write(compute.getBytes(UTF_8)))
    val in = fs.open(path)
    try new String(in.readAllBytes(), UTF_8) finally in.close()
  }

  /** Whether this process sees the marker the driver wrote: a checkpoint location on a disk of
    * the driver's host alone looks empty from executors on other hosts.
    */
  def visible: Boolean = fs.exists(marker)

  /** The state of the journal's entry `(revision, origin)` saved at exactly `offset`. */
  def load(journal: String, offset: Long, revision: Long, origin: Long): Option[SequencerState] =
    loadAny(journal, offset).filter(s => s.revision == revision && s.origin == origin)

  private def loadAny(journal: String, offset: Long): Option[SequencerState] =
    try Some(read(journal, file(journal, offset)))
    catch { case _: FileNotFoundException => None }

  /** The entry's newest state at an offset in `[from, atOrBelow]`, with its offset. */
  def nearest(journal: String, from: Long, atOrBelow: Long, revision: Long, origin: Long): Option[(Long, SequencerState)] =
    states(journal).map(_._1).filter(o => o >= from && o <= atOrBelow).sorted(Ordering[Long].reverse).iterator
      .flatMap(o => load(journal, o, revision, origin).map(o -> _)).nextOption()

  /** Saves the state at `offset` unless the entry has one there already; returns the one that is. */
  def save(journal: String, offset: Long, state: SequencerState): SequencerState = {
    val path = file(journal, offset)
    if (writeOnce(path, out => write(state, out))) state
    else {
      val saved = read(journal, path)
      if (saved.revision == state.revision && saved.origin == state.origin) saved
      else { fs.delete(path, false); save(journal, offset, state) } // left by an earlier entry
    }
  }

  /** Deletes the states of `journal` below `offset` except the newest of them, and temporary
    * files that attempts killed while saving left behind.
    */
  def prune(journal: String, offset: Long): Unit = {
    val all = list(journalDir(journal))
    val below = all.flatMap(s => stateOffset(s.getPath.getName)).filter(_ < offset)
    val keep = below.maxOption
    below.filterNot(keep.contains).foreach(o => fs.delete(file(journal, o), false))
    all.filter(s => isTemporary(s.getPath.getName) && s.getModificationTime < System.currentTimeMillis() - StaleTempMillis)
      .foreach(s => fs.delete(s.getPath, false))
  }

  /** Journals with saved states. */
  def journals(): Seq[String] =
    list(journalsRoot).filter(_.isDirectory).map(s => URLDecoder.decode(s.getPath.getName, UTF_8)).toSeq

  /** Forgets every state of `journal`. */
  def remove(journal: String): Unit = fs.delete(journalDir(journal), true)

  private def states(journal: String): Seq[(Long, Path)] =
    list(journalDir(journal)).flatMap(s => stateOffset(s.getPath.getName).map(_ -> s.getPath)).toSeq

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
    // only to an attempt that wrote the same state.
    val renamed = !fs.exists(path) && fs.rename(tmp, path)
    if (!renamed) {
      fs.delete(tmp, false)
      if (!fs.exists(path)) throw new IllegalStateException(s"cannot save $path")
    }
    renamed
  }

  private def read(journal: String, path: Path): SequencerState = {
    val in = fs.open(path)
    val bytes = try in.readAllBytes() finally in.close()
    decode(journal, path.toString, java.nio.ByteBuffer.wrap(bytes))
  }

  private def journalDir(journal: String) = new Path(journalsRoot, URLEncoder.encode(journal, UTF_8))
  private def file(journal: String, offset: Long) = new Path(journalDir(journal), s"$offset$Suffix")
}

object SequencerStateStore {
  val FormatVersion = 1
  private val MarkerName = "source.json"
  private val Suffix = ".state"
  private val TempSuffix = ".tmp"
  private val Magic = 0x475a5351 // "GZSQ"
  private val StaleTempMillis = 10 * 60 * 1000L

  private def stateOffset(name: String): Option[Long] =
    if (name.endsWith(Suffix) && !name.startsWith(".")) name.stripSuffix(Suffix).toLongOption else None

  private def isTemporary(name: String): Boolean = name.startsWith(".") && name.endsWith(TempSuffix)

  /** The binary form: magic, version, the entry's revision and origin, the resume offset, then each producer's id, last ACK clock and
    * open transaction's begin offset (-1 if none): 24 bytes a producer, so a million producers
    * take 23 MiB.
    */
  private[spark] def write(state: SequencerState, stream: java.io.OutputStream): Unit = {
    val out = new DataOutputStream(new BufferedOutputStream(stream, 1 << 16))
    out.writeInt(Magic)
    out.writeInt(FormatVersion)
    out.writeLong(state.revision)
    out.writeLong(state.origin)
    out.writeLong(state.resume)
    out.writeInt(state.producers.size)
    state.producers.foreach { p =>
      out.writeLong(p.producer.value)
      out.writeLong(p.lastAck)
      out.writeLong(p.begin)
    }
    out.flush()
  }

  private[spark] def decode(journal: String, where: String, in: java.nio.ByteBuffer): SequencerState = {
    if (in.remaining() < 8 || in.getInt() != Magic) throw GazetteErrors.unsupportedStateFormat(where, None)
    val version = in.getInt()
    if (version != FormatVersion) throw GazetteErrors.unsupportedStateFormat(where, Some(version))
    if (in.remaining() < 28) throw GazetteErrors.unsupportedStateFormat(where, None)
    val revision = in.getLong()
    val origin = in.getLong()
    val resume = in.getLong()
    val n = in.getInt()
    if (n < 0 || in.remaining() != n * 24L) throw GazetteErrors.unsupportedStateFormat(where, None)
    val producers = new Array[ProducerState](n)
    var i = 0
    while (i < n) {
      producers(i) = ProducerState(journal, ProducerId(in.getLong()), in.getLong(), in.getLong())
      i += 1
    }
    SequencerState(resume, scala.collection.immutable.ArraySeq.unsafeWrapArray(producers), revision, origin)
  }
}
