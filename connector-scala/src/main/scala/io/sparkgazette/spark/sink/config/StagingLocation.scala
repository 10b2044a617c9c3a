package io.sparkgazette.spark
package sink
package config

import scala.util.Try
import scala.util.control.NonFatal

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.options.GazetteOptions
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Where a write's runs are staged, under `root`: a directory per epoch or batch (its `key`)
  * where the write records its intents, then a directory per run of the write's tasks
  * (`writeId`, drawn by the driver), so that two runs of one epoch or batch (a zombie driver, a
  * batch run twice at once) never write the same files. A write without intents has no key:
  * its runs go under `root/gazette-sink-<writeId>/`, which two writes sharing a root never clash
  * on, and which deleting leaves nothing of the write behind (a root such as `/tmp` is shared
  * with other users, who could not write under a directory of ours there).
  *
  * @param setting the option or Spark setting that put the runs there, for errors to name
  */
private[sink] final case class StagingLocation(root: String, setting: String = GazetteOptions.StagingLocation) {
  def dir(key: String): Path = new Path(root, key)

  /** The directory of one run of the write's tasks. */
  def runDir(key: Option[String], writeId: String): Path = dir(key.fold(s"gazette-sink-$writeId")(k => s"$k/$writeId"))

  /** The files of one task attempt's run in the `index`th journal of the write's targets, less
    * their `.<part>.run` suffix.
    */
  def file(key: Option[String], writeId: String, partition: Int, stageAttempt: Int, attempt: Int, index: Int): Path =
    new Path(runDir(key, writeId), s"$partition-$stageAttempt-$attempt-$index")

  /** Makes the root, before any task writes under it: a root that cannot be made fails the write
    * at once, naming the setting that placed it.
    */
  def prepare(conf: Configuration): Unit = {
    val r = new Path(root)
    val made =
      try r.getFileSystem(conf).mkdirs(r)
      catch { case NonFatal(e) => throw GazetteErrors.stagingUnwritable(setting, root, r.toString, e) }
    if (!made) throw GazetteErrors.stagingUnwritable(setting, root, r.toString,
      new java.io.IOException(s"cannot make the directory $r"))
  }

  /** Deletes the staged runs of `key` (published, or of a write rolled back). */
  def delete(key: String, conf: Configuration): Unit = {
    val d = dir(key)
    val fs = d.getFileSystem(conf)
    if (fs.exists(d)) fs.delete(d, true)
  }

  /** Deletes the staged runs of the epochs before `epoch`: committed or abandoned, all of them. */
  def deleteBefore(epoch: Long, conf: Configuration): Unit = {
    val r = new Path(root)
    val fs = r.getFileSystem(conf)
    if (fs.exists(r))
      fs.listStatus(r).map(_.getPath).filter(p => Try(p.getName.toLong).toOption.exists(_ < epoch)).foreach(fs.delete(_,
          true))
  }
}

private[sink] object StagingLocation {

  /** `<checkpointLocation>/gazette-sink/staging/epochs/<epoch>/` for a stream,
    * `.../staging/batches/<batchId>/` for a batch job with `batchId`: where the epoch's record
    * points, so that a restart publishes what it recorded.
    */
  def underCheckpoint(checkpointLocation: String, batches: Boolean): StagingLocation =
    StagingLocation(
      new Path(checkpointLocation, s"gazette-sink/staging/${if (batches) "batches" else "epochs"}").toString,
      GazetteOptions.CheckpointLocation)
}
