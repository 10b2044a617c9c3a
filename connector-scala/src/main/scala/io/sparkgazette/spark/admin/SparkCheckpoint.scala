package io.sparkgazette.spark
package admin

import java.io.FileNotFoundException
import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Try

import io.sparkgazette.spark.errors.GazetteErrors
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

/** What Spark keeps of a streaming query under its checkpoint location, read as Spark writes it,
  * on any file system Hadoop reaches, and never written to:
  *
  *   - `offsets/<batch>`: the offsets a batch ends at, written when the batch is planned (in
  *     real-time mode once it has run): a version line, the batch's metadata, then each source's
  *     offset, `-` for none; a line per source in its order (`v1`), or `<source id>:<offset>`
  *     (`v2`);
  *   - `commits/<batch>`: written once the batch's output is committed;
  *   - `sources/<source id>/`: each source's own files.
  */
private[admin] final class SparkCheckpoint(location: String, conf: Configuration) {
  import SparkCheckpoint._

  private val root = new Path(location)
  private lazy val fs: FileSystem = root.getFileSystem(conf)

  /** The location, qualified with its file system (`file:/tmp/ckpt`, `s3a://bucket/ckpt`). */
  lazy val path: String = fs.makeQualified(root).toString

  def exists: Boolean = fs.exists(root)

  /** The names at the top of the location, directories with a trailing `/`, sorted. */
  def entries: Seq[String] = listing(root).map(s => s.getPath.getName + (if (s.isDirectory) "/" else "")).sorted

  def hasOffsetLog: Boolean = fs.exists(new Path(root, OffsetLog))

  def hasSinkLog: Boolean = fs.exists(new Path(root, SinkState))

  /** The batches planned (their offsets written), oldest first. */
  def planned: Seq[Long] = batches(OffsetLog)

  /** The batches committed, oldest first. */
  def committed: Seq[Long] = batches(CommitLog)

  /** Each source's offset at the end of `batch`, as its JSON text (None where Spark wrote `-`). */
  def offsets(batch: Long): Seq[(String, Option[String])] = {
    val file = s"$OffsetLog/$batch"
    parseOffsetLog(read(file).getOrElse(throw GazetteErrors.offsetLogUnreadable(s"$path/$file", "it is gone"))) match {
      case Right(offsets) => offsets
      case Left(problem) => throw GazetteErrors.offsetLogUnreadable(s"$path/$file", problem)
    }
  }

  /** The text of `relative`, a file under the location, if it exists. */
  def read(relative: String): Option[String] =
    try {
      val in = fs.open(new Path(root, relative))
      try Some(new String(in.readAllBytes(), UTF_8))
      finally in.close()
    } catch { case _: FileNotFoundException => None }

  // Spark names a log's files by batch; checksums (.0.crc) and temporary files are not batches.
  private def batches(log: String): Seq[Long] =
    listing(new Path(root, log)).map(_.getPath.getName).filter(_.matches("\\d+")).flatMap(n => Try(n.toLong).toOption)
      .sorted

  private def listing(dir: Path) =
    try fs.listStatus(dir).toSeq
    catch { case _: FileNotFoundException => Seq.empty }
}

private[admin] object SparkCheckpoint {
  val OffsetLog = "offsets"
  val CommitLog = "commits"
  val SourceDirs = "sources"
  // The connector's sink keeps its intent log here (see the sink's IntentLogLocation).
  val SinkState = "gazette-sink"

  /** The sources' offsets of an offset log file, in its order: `Left` says what is wrong with it. */
  def parseOffsetLog(text: String): Either[String, Seq[(String, Option[String])]] = {
    val lines = text.split("\n", -1).toList
    def offset(s: String): Option[String] = Some(s.trim).filter(o => o != "-" && o.nonEmpty)
    lines match {
      case "v1" :: _ :: sources =>
        Right(sources.zipWithIndex.filterNot { case (s, i) => s.isEmpty && i == sources.size - 1 }.map {
          case (s, i) => i.toString -> offset(s)
        })
      case "v2" :: _ :: sources =>
        val entries = sources.filter(_.nonEmpty).map(s => s.indexOf(':') -> s)
        entries.collectFirst { case (-1, s) => s } match {
          case Some(bad) => Left(s"a v2 offset line without a source id: $bad")
          case None => Right(entries.map { case (i, s) => s.substring(0, i) -> offset(s.substring(i + 1)) })
        }
      case version :: _ :: _ => Left(s"offset log version $version, not one Spark 3.5 to 4.x writes (v1, v2)")
      case _ => Left("not an offset log file (fewer than two lines)")
    }
  }
}
