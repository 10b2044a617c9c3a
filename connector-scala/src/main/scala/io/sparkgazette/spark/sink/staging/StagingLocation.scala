package io.sparkgazette.spark
package sink
package staging

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Where a write's runs are staged: `<checkpointLocation>/gazette-sink/staging/epochs/<epoch>/`
  * for a stream, `.../staging/batches/<batchId>/` for a batch job, then a directory per run of
  * the write (`writeId`, drawn by the driver), so that two runs of one epoch or batch (a zombie
  * driver, a batch run twice at once) never write the same files.
  */
private[spark] final case class StagingLocation(checkpointLocation: String, batches: Boolean) {
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
