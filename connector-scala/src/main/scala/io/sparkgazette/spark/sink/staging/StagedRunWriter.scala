package io.sparkgazette.spark
package sink
package staging

import scala.util.control.NonFatal

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.sink.config.StagingLocation
import io.sparkgazette.spark.sink.intents.StagedRun
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.permission.FsPermission
import org.apache.hadoop.fs.{FSDataOutputStream, LocalFileSystem, Path}

/** One task attempt's staged run in one journal, as it is written: in parts of at most
  * [[StagedRunWriter.PartBytes]], each appended on its own (a part is whole messages, and one
  * append of protobuf's ByteString must stay below 2 GiB).
  *
  * @param base  the parts' path without its `.<part>.run` suffix
  * @param token the run's name in its journal's registers, unique to the write's run (see [[StagedRun]])
  * @param location where the write stages, for errors to name
  * @param sync  whether a part is on disk before the driver hears of it: a run that a record will
  *              name must outlive its host; one that only this job reads need not (the host's
  *              crash fails the job)
  */
private[sink] final class StagedRunWriter(base: Path, token: String, location: StagingLocation, conf: Configuration,
    partBytes: Long = StagedRunWriter.PartBytes, sync: Boolean = true) {
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
      out = try open(path)
      catch {
        // A task cancelled while it opens a part is not a location nobody can write.
        case e: java.io.IOException
            if !e.isInstanceOf[java.io.InterruptedIOException] &&
              !e.isInstanceOf[java.nio.channels.ClosedByInterruptException] =>
          throw GazetteErrors.stagingUnwritable(location.setting, location.root, path.toString, e)
      }
      written = 0
    }
    out.write(bytes, offset, length)
    written += length
    if (written >= partBytes) closePart(clock)
  }

  private def open(path: Path): FSDataOutputStream = {
    val fs = fileSystem(path)
    // Staged rows are the job's alone, wherever they live (Spark's local directory is often a
    // shared /tmp): the owner's only.
    fs.mkdirs(path.getParent, StagedRunWriter.OwnerOnlyDirectory)
    fs.create(
      path,
      StagedRunWriter.OwnerOnlyFile,
      false,
      fs.getConf.getInt("io.file.buffer.size", 4096),
      fs.getDefaultReplication(path),
      fs.getDefaultBlockSize(path),
      null
    )
  }

  // On the local file system, without Hadoop's .crc files: a staged run is read once, by
  // mapping it, and its length is checked against the record.
  private def fileSystem(path: Path) = path.getFileSystem(conf) match {
    case l: LocalFileSystem => l.getRawFileSystem
    case other => other
  }

  private def closePart(clock: Long): Unit = {
    // On disk before the driver records it: a record that outlives its part's bytes (a crash
    // of the host) would name a run nobody can publish.
    if (sync) out.hsync()
    out.close()
    out = null
    parts += ((path, written, clock))
  }

  /** The run's parts, closed and synced. `quietAck(clock)` is an ACK at `clock`. */
  def close(journal: String, producer: String, clock: Long, revision: Long, quietAck: Long => Array[Byte])
      : Seq[StagedRun] = {
    if (out != null) closePart(clock)
    parts.toSeq.zipWithIndex.map { case ((p, bytes, last), i) =>
      StagedRun(journal, p.toString, bytes, producer, last, s"$token.$i", revision, quietAck(last), i)
    }
  }

  def discard(): Unit = {
    if (out != null) try out.close()
    catch { case NonFatal(_) => }
    (parts.map(_._1) ++ Option(path)).distinct.foreach(p =>
      try fileSystem(p).delete(p, false)
      catch { case NonFatal(_) => })
    // A task that wrote on after its write was aborted made the run's directory again, after
    // the driver deleted it: the last to leave it removes it (a non-recursive delete fails while
    // another task's files are there).
    Option(path).map(_.getParent).foreach(dir =>
      try {
        val fs = fileSystem(dir)
        if (fs.listStatus(dir).isEmpty) fs.delete(dir, false)
      } catch { case NonFatal(_) => })
  }
}

private[sink] object StagedRunWriter {
  val PartBytes: Long = 256L << 20
  private val OwnerOnlyDirectory = new FsPermission("700")
  private val OwnerOnlyFile = new FsPermission("600")
}
