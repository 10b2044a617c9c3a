package io.sparkgazette.testing

import io.sparkgazette.client.GazetteClient
import org.apache.spark.sql.SparkSession
import org.scalatest.{BeforeAndAfterAll, Suite}

/** A suite with its own local cluster of `brokers` brokers and a client of its first broker,
  * both stopped after the suite. `store = "s3"` gives the cluster an S3 server for fragments.
  */
trait ClusterSuite extends BeforeAndAfterAll { this: Suite =>
  protected def brokers: Int = 1
  protected def store: String = "file"
  protected var cluster: LocalCluster = _
  protected var client: GazetteClient = _

  override def beforeAll(): Unit = {
    super.beforeAll()
    cluster = LocalCluster.start(brokers, store = store)
    client = GazetteClient(cluster.broker)
  }

  override def afterAll(): Unit =
    try {
      if (client != null) client.close()
      if (cluster != null) cluster.close()
    } finally super.afterAll()
}

/** A suite with a local SparkSession, stopped after the suite. */
trait SparkSuite extends BeforeAndAfterAll { this: Suite =>

  /** Spark's master; `local[2,2]` gives each task a second attempt. */
  protected def sparkMaster: String = "local[2]"
  protected var spark: SparkSession = _

  override def beforeAll(): Unit = {
    super.beforeAll()
    spark = SparkSession.builder().master(sparkMaster).appName(getClass.getSimpleName)
      .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2").getOrCreate()
  }

  override def afterAll(): Unit =
    try { if (spark != null) spark.stop() }
    finally super.afterAll()
}

/** A [[ClusterSuite]] with a local SparkSession, started after the cluster and stopped before it. */
trait SparkClusterSuite extends ClusterSuite with SparkSuite { this: Suite => }

/** A [[SparkClusterSuite]] for real-time mode: three task slots (real-time tasks hold theirs for
  * the whole batch), batches as short as a second, and the sink allowed (Spark's allowlist, and
  * its asynchronous progress tracking, admit only its own sinks).
  */
trait RealTimeClusterSuite extends SparkClusterSuite { this: Suite =>
  override protected def sparkMaster: String = "local[3]"

  override def beforeAll(): Unit = {
    super.beforeAll()
    spark.conf.set("spark.sql.streaming.realTimeMode.minBatchDuration", "1s")
    spark.conf.set("spark.sql.streaming.realTimeMode.asyncProgressTrackingByDefault.enabled", "false")
    spark.conf.set("spark.sql.streaming.realTimeMode.allowlistCheck", "false")
  }
}
