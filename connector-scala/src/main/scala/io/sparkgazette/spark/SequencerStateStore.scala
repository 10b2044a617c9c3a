package io.sparkgazette.spark

import java.io.{BufferedOutputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream, FileNotFoundException}
import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest
import java.util.UUID

import scala.collection.mutable
import scala.util.control.NonFatal

import io.sparkgazette.message.{ProducerId, ProducerState}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, FileStatus, FileSystem, Path}

/** A journal's read-committed state at a batch boundary `offset`: where reading resumes (the end
  * of the last message that ends at or before `offset`) and its producers' states. `revision`
  * and `origin` name the journal's entry into the query (see [[JournalPosition]]): a state an
  * earlier entry left behind, say by an attempt still running when the journal was read afresh,
  * is not this entry's.
  */
final case class SequencerState(resume: Long, producers: Seq[ProducerState], revision: Long = 0L, origin: Long = -1L)

/** Where one saved state is: the file (relative to the store's directory) and the state's key,
  * `(journal, offset, revision, origin)`, with what its file's index says of it (`resume`, and
  * where its `producers` lie in the file), so that a task reads that state alone.
  */
final case class StateRef(file: String, journal: String, offset: Long, revision: Long, origin: Long, resume: Long,
    position: Long, producers: Int)

/** Sequencer states under the source's checkpoint directory (format 2):
  *
  * {{{
  *   <dir>/source.json                          {"format": 2}, written by the driver when the query starts
  *   <dir>/initial-offsets.json                 where the query began, kept for re-planning its first batch
  *   <dir>/batches/<end>/<task>.states          the states one task saved: every journal it read, at its end
  * }}}
  *
  * `<end>` names a batch by a hash of its end offsets, `<task>` a task by a hash of its ranges,
  * so that every attempt of a task, before and after a restart, names the same file. A states
  * file is binary: a header, an index (per state its journal, offset, revision, origin, resume
  * offset and where its producers lie) and the producers, 24 bytes each. It is written under a
  * temporary name and renamed only if absent: the first attempt to save a task's states wins.
  * The driver reads the indexes alone (see [[SequencerStateCatalog]]); a task reads the states
  * it starts from at the positions the driver hands it.
  */
final class SequencerStateStore(dir: String, conf: Configuration) {
  import SequencerStateStore._

  private val root = new Path(dir)
  private val batchesRoot = new Path(root, BatchesName)
  private val marker = new Path(root, MarkerName)
  private lazy val fs: FileSystem = root.getFileSystem(conf)
  private val opened = mutable.Map[String, FSDataInputStream]()

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

  /** The state `ref` points at. */
  def load(ref: StateRef): SequencerState = {
    val in = opened.getOrElseUpdate(ref.file, fs.open(new Path(root, ref.file)))
    val bytes = new Array[Byte](math.multiplyExact(ref.producers, 24))
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
    SequencerState(ref.resume, scala.collection.immutable.ArraySeq.unsafeWrapArray(producers), ref.revision, ref.origin)
  }

  /** The index of the states file `file` (relative to the store's directory), or None if absent. */
  def index(file: String): Option[Seq[StateRef]] =
    try {
      val in = fs.open(new Path(root, file))
      try Some(readIndex(file, in)) finally in.close()
    } catch { case _: FileNotFoundException => None }

  /** Saves a task's states as `file` unless an earlier attempt did; false if one did. */
  def save(file: String, states: Seq[(String, Long, SequencerState)]): Boolean =
    writeOnce(new Path(root, file), out => write(states, out))

  /** The states files of batch directory `batch` (`batches/<end>`), oldest first, as paths
    * relative to the store's directory; temporary files of attempts killed long ago are deleted.
    */
  def files(batch: String): Seq[String] = {
    val all = list(new Path(root, batch))
    all.filter(s => isTemporary(s.getPath.getName) && s.getModificationTime < System.currentTimeMillis() - StaleTempMillis)
      .foreach(s => fs.delete(s.getPath, false))
    all.filter(s => s.isFile && s.getPath.getName.endsWith(Suffix) && !s.getPath.getName.startsWith("."))
      .sortBy(s => (s.getModificationTime, s.getPath.getName)).map(s => s"$batch/${s.getPath.getName}").toSeq
  }

  /** Every batch directory, as `batches/<end>`. */
  def batches(): Seq[String] =
    list(batchesRoot).filter(_.isDirectory).map(s => s"$BatchesName/${s.getPath.getName}").toSeq.sorted

  /** Deletes a states file, or a batch directory with whatever is left in it. */
  def delete(relative: String): Unit = fs.delete(new Path(root, relative), true)

  /** Closes the files [[load]] opened. */
  def close(): Unit = {
    opened.values.foreach(in => try in.close() catch { case NonFatal(_) => })
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
      if (!fs.exists(path)) throw new IllegalStateException(s"cannot save $path")
    }
    renamed
  }
}

object SequencerStateStore {
  val FormatVersion = 2
  private val MarkerName = "source.json"
  val BatchesName = "batches"
  val Suffix = ".states"
  private val TempSuffix = ".tmp"
  private val Magic = 0x475a5351 // "GZSQ"
  private val StaleTempMillis = 10 * 60 * 1000L

  private def isTemporary(name: String): Boolean = name.startsWith(".") && name.endsWith(TempSuffix)

  /** The directory of the batch ending at `end`: a hash of its end offsets. */
  def batchDir(end: Map[String, JournalPosition]): String =
    s"$BatchesName/${digest(end.toSeq.sortBy(_._1).iterator.map { case (j, p) => s"$j\u0000${p.offset}\u0000${p.revision}\u0000${p.origin}" })}"

  /** The file of a task reading `ranges` in batch directory `batch`. */
  def taskFile(batch: String, ranges: Seq[JournalRange]): String =
    s"$batch/${digest(ranges.sortBy(r => (r.journal, r.piece.fold(r.start)(_.from))).iterator.map(r => s"${r.journal}\u0000${r.start}\u0000${r.end}\u0000${r.revision}\u0000${r.origin}" +
      r.piece.fold("")(p => s"\u0000${p.from}\u0000${p.until}")))}$Suffix"

  private def digest(parts: Iterator[String]): String = {
    val md = MessageDigest.getInstance("SHA-256")
    parts.foreach { p => md.update(p.getBytes(UTF_8)); md.update('\n'.toByte) }
    md.digest().take(12).map(b => f"${b & 0xff}%02x").mkString
  }

  /** The binary form: magic, version, the index's length, the index (the number of states, then
    * per state its journal, offset, revision, origin, resume offset, number of producers and
    * their position in the file), then each state's producers: id, last ACK clock and open
    * transaction's begin offset (-1 if none), 24 bytes a producer, so that a million producers
    * take 23 MiB.
    */
  private[spark] def write(states: Seq[(String, Long, SequencerState)], stream: java.io.OutputStream): Unit = {
    val indexBytes = new ByteArrayOutputStream()
    val index = new DataOutputStream(indexBytes)
    index.writeInt(states.size)
    // Positions are known once the index's length is: it is written twice, the second time exact.
    def writeIndex(base: Long): Unit = {
      indexBytes.reset()
      index.writeInt(states.size)
      var position = base
      states.foreach { case (journal, offset, s) =>
        index.writeUTF(journal)
        index.writeLong(offset)
        index.writeLong(s.revision)
        index.writeLong(s.origin)
        index.writeLong(s.resume)
        index.writeInt(s.producers.size)
        index.writeLong(position)
        position += s.producers.size * 24L
      }
      index.flush()
    }
    writeIndex(0)
    writeIndex(12L + indexBytes.size())
    val out = new DataOutputStream(new BufferedOutputStream(stream, 1 << 16))
    out.writeInt(Magic)
    out.writeInt(FormatVersion)
    out.writeInt(indexBytes.size())
    indexBytes.writeTo(out)
    states.foreach { case (_, _, s) =>
      s.producers.foreach { p =>
        out.writeLong(p.producer.value)
        out.writeLong(p.lastAck)
        out.writeLong(p.begin)
      }
    }
    out.flush()
  }

  private[spark] def readIndex(file: String, stream: java.io.InputStream): Seq[StateRef] = {
    val in = new DataInputStream(new java.io.BufferedInputStream(stream, 1 << 16))
    val header = new Array[Byte](12)
    try in.readFully(header)
    catch { case _: java.io.EOFException => throw GazetteErrors.unsupportedStateFormat(file, None) }
    val h = java.nio.ByteBuffer.wrap(header)
    if (h.getInt() != Magic) throw GazetteErrors.unsupportedStateFormat(file, None)
    val version = h.getInt()
    if (version != FormatVersion) throw GazetteErrors.unsupportedStateFormat(file, Some(version))
    val length = h.getInt()
    if (length < 4) throw GazetteErrors.unsupportedStateFormat(file, None)
    val bytes = new Array[Byte](length)
    try in.readFully(bytes)
    catch { case _: java.io.EOFException => throw GazetteErrors.unsupportedStateFormat(file, None) }
    val index = new DataInputStream(new java.io.ByteArrayInputStream(bytes))
    val n = index.readInt()
    (0 until n).map { _ =>
      val journal = index.readUTF()
      val offset = index.readLong()
      val revision = index.readLong()
      val origin = index.readLong()
      val resume = index.readLong()
      val producers = index.readInt()
      val position = index.readLong()
      if (producers < 0) throw GazetteErrors.unsupportedStateFormat(file, None)
      StateRef(file, journal, offset, revision, origin, resume, position, producers)
    }
  }
}

/** The driver's view of the saved states: which states exist, by `(journal, offset, revision,
  * origin)`, and in which file. It reads a batch directory's indexes once (a listing and one
  * read per task of the batch), so that planning and committing a batch never list a directory
  * per journal; after a restart it reads every directory left.
  *
  * Where two files hold a state with the same key (attempts of a batch packed differently, say
  * before and after a restart), the one in the file written first wins, as it would in a
  * create-if-absent file per state.
  */
final class SequencerStateCatalog(store: SequencerStateStore) {
  private val byJournal = mutable.Map[String, mutable.TreeMap[Long, List[StateRef]]]()
  private val filesRead = mutable.Set[String]()
  private val batchesRead = mutable.Set[String]()
  private var loaded = false
  private var pinned = Set.empty[String]

  /** Reads the directory of the batch ending at `end` unless it was read; `again`: reads what
    * it holds now that was not read (a committed batch re-run after a restart wrote its files
    * after the restart listed its directory).
    */
  def refresh(batch: String, again: Boolean = false): Unit = synchronized {
    loadAll()
    if (again || !batchesRead(batch)) {
      batchesRead += batch
      store.files(batch).filterNot(filesRead).foreach(add)
    }
  }

  /** The state saved at exactly `offset`, or else the newest in `[from, offset]`, of the entry. */
  def lookup(journal: String, from: Long, offset: Long, revision: Long, origin: Long): Option[StateRef] = synchronized {
    loadAll()
    byJournal.get(journal).flatMap { states =>
      states.rangeTo(offset).toSeq.reverseIterator.takeWhile(_._1 >= from)
        .flatMap(_._2.find(r => r.revision == revision && r.origin == origin)).nextOption()
    }
  }

  /** Keeps, for each journal `committed` holds, the states of its entry at or above the newest
    * one at or below its offset, and the states of the entry `planned` holds (a batch planned
    * after the journal was read afresh); forgets every other state. Deletes the files no kept
    * state is in, and batch directories left with no file.
    */
  def prune(committed: Map[String, JournalPosition], planned: Map[String, JournalPosition]): Unit = synchronized {
    loadAll()
    byJournal.keys.toSeq.foreach { j =>
      val states = byJournal(j)
      def same(r: StateRef, p: JournalPosition) = r.revision == p.revision && r.origin == p.origin
      val floor = committed.get(j).flatMap(p => states.rangeTo(p.offset).toSeq.reverseIterator
        .find(_._2.exists(same(_, p))).map(_._1))
      states.keys.toSeq.foreach { o =>
        val kept = states(o).filter(r => committed.get(j) match {
          case Some(p) if same(r, p) => floor.forall(o >= _)
          case _                     => planned.get(j).exists(same(r, _))
        })
        if (kept.isEmpty) states.remove(o) else states(o) = kept
      }
      if (states.isEmpty) byJournal.remove(j)
    }
    val live = liveFiles ++ pinned
    val dead = filesRead.toSet -- live
    dead.foreach { f =>
      store.delete(f)
      filesRead -= f
    }
    val liveBatches = (live ++ filesRead).map(batchOf)
    dead.map(batchOf).filterNot(liveBatches).foreach { b =>
      store.delete(b)
      batchesRead -= b
    }
  }

  /** Keeps the files of `refs` whatever [[prune]] decides, until the next call: the running batch's tasks read them. */
  def pin(refs: Iterable[StateRef]): Unit = synchronized { pinned = refs.map(_.file).toSet }

  /** Forgets the states of `journal`: it is read afresh. */
  def forget(journal: String): Unit = synchronized { byJournal.remove(journal) }

  /** The states files the catalog knows, for tests and metrics. */
  def files: Set[String] = synchronized { liveFiles }

  private def liveFiles: Set[String] = { byJournal.valuesIterator.flatMap(_.valuesIterator.flatten).map(_.file).toSet }

  private def batchOf(file: String): String = file.substring(0, file.lastIndexOf('/'))

  private def loadAll(): Unit = if (!loaded) {
    loaded = true
    store.batches().foreach { b =>
      batchesRead += b
      store.files(b).foreach(add)
    }
  }

  private def add(file: String): Unit = {
    filesRead += file
    store.index(file).getOrElse(Nil).foreach { r =>
      val states = byJournal.getOrElseUpdate(r.journal, mutable.TreeMap.empty)
      val at = states.getOrElse(r.offset, Nil)
      if (!at.exists(o => o.revision == r.revision && o.origin == r.origin)) states(r.offset) = at :+ r
    }
  }
}
