package io.sparkgazette.spark
package sink
package staging

import io.sparkgazette.spark.sink.config.{IntentLogLocation, SinkOptions, StagingLocation}
import org.apache.hadoop.conf.Configuration
import org.apache.spark.SparkConf
import org.scalatest.funsuite.AnyFunSuite

/** Where each kind of write stages its large runs. */
class WriteStagingSuite extends AnyFunSuite {
  private val spark = new SparkConf(false).set("spark.local.dir", "/spark-local,/spark-local-2")
  private val local = new Configuration(false)

  private def options(extra: (String, String)*): SinkOptions =
    SinkOptions.parse(Map("broker" -> "http://b:8080", "journal" -> "a/b") ++ extra, streaming = false)

  private def root(o: SinkOptions, master: String = "local[2]", conf: Configuration = local): Option[String] =
    WriteStaging.of(o, IntentLogLocation.of(o, streaming = false), master, spark, conf).map(_.root)

  test("a write that records its intents stages under its checkpoint, whatever stagingLocation says") {
    val o = options("checkpointLocation" -> "/ckpt", "batchId" -> "day-1", "stagingLocation" -> "/elsewhere")
    assert(root(o, master = "spark://m:7077") == Some("/ckpt/gazette-sink/staging/batches"))
  }

  test("a plain write stages under stagingLocation, else its checkpoint, else Spark's local directory on one host") {
    assert(root(options("stagingLocation" -> "hdfs://nn/staging", "checkpointLocation" -> "/ckpt")) ==
      Some("hdfs://nn/staging"))
    assert(root(options("checkpointLocation" -> "/ckpt"), master = "spark://m:7077") ==
      Some("/ckpt/gazette-sink/staging/writes"))
    assume(!sys.env.contains("SPARK_LOCAL_DIRS"), "SPARK_LOCAL_DIRS overrides spark.local.dir")
    assert(root(options()) == Some("file:/spark-local"))
    assert(root(options(), master = "local-cluster[2,1,1024]") == Some("file:/spark-local"))
  }

  test("on a cluster, a plain write stages on the default file system when the hosts share it, else nowhere") {
    assert(root(options(), master = "spark://m:7077").isEmpty)
    val shared = new Configuration(false)
    shared.set("fs.defaultFS", "gztest:///")
    shared.set("fs.gztest.impl", classOf[io.sparkgazette.testing.SessionOnlyFileSystem].getName)
    shared.set("fs.gztest.impl.disable.cache", "true")
    val home = root(options(), master = "yarn", conf = shared)
    assert(home.exists(h => h.startsWith("gztest:/") && h.endsWith("/.gazette-sink-staging")), home)
  }

  test("a write without intents stages in a directory of its own, which deleting leaves nothing of it behind") {
    assert(StagingLocation("file:/tmp/").runDir(None, "w1").toString == "file:/tmp/gazette-sink-w1")
    assert(StagingLocation("/ckpt/gazette-sink/staging/batches").runDir(Some("day-1"), "w1").toString ==
      "/ckpt/gazette-sink/staging/batches/day-1/w1")
  }

  test("each location names the setting that put it there, for errors to name") {
    def setting(o: SinkOptions, master: String = "local[2]") =
      WriteStaging.of(o, IntentLogLocation.of(o, streaming = false), master, spark, local).map(_.setting)
    assert(setting(options("stagingLocation" -> "/s", "checkpointLocation" -> "/c")) == Some("stagingLocation"))
    assert(setting(options("checkpointLocation" -> "/c")) == Some("checkpointLocation"))
    assert(setting(options("checkpointLocation" -> "/c", "batchId" -> "b")) == Some("checkpointLocation"))
    assert(setting(options()) == Some("spark.local.dir"))
  }

  test("writes that never stage: at least once, or readerRingSize=0") {
    assert(root(options("deliveryGuarantee" -> "at-least-once")).isEmpty)
    assert(root(options("readerRingSize" -> "0", "stagingLocation" -> "/staging")).isEmpty)
  }
}
