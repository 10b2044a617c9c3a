package io.sparkgazette.spark
package sink
package staging

import scala.util.Try

import io.sparkgazette.spark.options.GazetteOptions
import io.sparkgazette.spark.sink.config.{IntentLogLocation, SinkOptions, StagingLocation}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.spark.SparkConf
import org.slf4j.LoggerFactory

/** Where a write stages its large runs (see [[StagedRun]]), if anywhere.
  *
  * A write that records its intents stages under its checkpoint, beside the record that names
  * the runs. One without intents (a batch job without `batchId`) has nothing to recover, so its
  * runs only need to outlive the job, somewhere the driver and every executor see, as Spark's
  * own file writers keep their task output under the destination until the job commits:
  * `stagingLocation`, else the checkpoint when one is given, else, where Spark runs on one host
  * (a `local` master), Spark's local directory, else the Hadoop default file system when it is
  * shared (HDFS, an object store). A cluster with none of these stages nothing: its large writes
  * stay open transactions that readers replay, and a warning (once per driver: a job writing
  * every few seconds would repeat it) names the option that fixes it.
  */
private[sink] object WriteStaging {
  private val log = LoggerFactory.getLogger(getClass)
  private val warned = new java.util.concurrent.atomic.AtomicBoolean(false)

  /** `master` and `spark` are the session's, `conf` its Hadoop configuration. */
  def of(options: SinkOptions, intentLog: Option[IntentLogLocation], master: String, spark: SparkConf,
      conf: Configuration): Option[StagingLocation] =
    if (!options.exactlyOnce || options.readerRingSize == 0) None
    else intentLog match {
      case Some(l) => Some(StagingLocation.underCheckpoint(l.checkpointLocation, l.batchId.isDefined))
      case None =>
        val root = options.stagingLocation.map(StagingLocation(_, GazetteOptions.StagingLocation))
          .orElse(options.checkpointLocation.map(c =>
              StagingLocation(new Path(c, "gazette-sink/staging/writes").toString, GazetteOptions.CheckpointLocation)))
          .orElse(if (master.startsWith("local")) Some(StagingLocation(localDir(spark), "spark.local.dir")) else None)
          .orElse(sharedDefault(conf).map(StagingLocation(_, "fs.defaultFS")))
        if (root.isEmpty && warned.compareAndSet(false, true)) log.warn(
          s"batch writes without batchId stage no runs here: no ${GazetteOptions.StagingLocation} is set and the cluster's default " +
            s"file system is local to each host, so a large write is one open transaction that read-committed readers " +
            s"replay. Set ${GazetteOptions.StagingLocation} (or spark.datasource.gazette." +
            s"${GazetteOptions.StagingLocation}) to a directory every host sees to keep their reads cheap")
        root
    }

  /** Spark's first local directory, where it keeps shuffle files: on one host, every executor's too. */
  private def localDir(spark: SparkConf): String = {
    val dirs = sys.env.getOrElse("SPARK_LOCAL_DIRS", spark.get("spark.local.dir", System.getProperty("java.io.tmpdir")))
    new Path("file", null, new java.io.File(dirs.split(",").head.trim).getAbsolutePath).toString
  }

  /** The default file system's home directory, unless that file system is this host's own disk. */
  private def sharedDefault(conf: Configuration): Option[String] =
    Try(FileSystem.get(conf)).toOption.filter(_.getUri.getScheme != "file").flatMap(fs =>
      Try(new Path(fs.getHomeDirectory, ".gazette-sink-staging").toString).toOption)
}
