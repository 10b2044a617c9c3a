package io.sparkgazette.spark
package sink
package realtime

import java.nio.file.Files

import io.sparkgazette.testing.{Journals, Judge, RealTimeClusterSuite}
import org.apache.spark.sql.functions.{col, struct, to_json}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/** A real-time query through the sink in a session that leaves Spark 4.3's asynchronous progress
  * tracking of real-time queries on: the query turns it off for itself with Spark's writer option
  * `asyncProgressTrackingEnabled=false`, and writes each row once, as Gazette's ReadCommittedIter
  * sees it, while its batch runs.
  */
class RealTimeWriterOptionsIntegrationSuite extends AnyFunSuite with RealTimeClusterSuite {
  private val AsyncByDefault = "spark.sql.streaming.realTimeMode.asyncProgressTrackingByDefault.enabled"

  override def beforeAll(): Unit = {
    super.beforeAll()
    spark.conf.unset(AsyncByDefault)
  }

  private def start(output: String, options: Map[String, String]): StreamingQuery =
    spark.readStream.format("gazette").option("broker", cluster.broker).option("selector", "prefix=opts/rt-in/")
      .option("startingOffsets", "earliest").option("realTimePartitions", "1").load()
      .select(to_json(struct(col("journal"), col("begin"))).as("value"),
        struct(col("journal"), col("uuid")).as("origin"))
      .writeStream.format("gazette").option("broker", cluster.broker).option("journal", output)
      .option("checkpointLocation", Files.createTempDirectory("gazette-rt-opts").toString).options(options)
      .outputMode("update").trigger(Trigger.RealTime("3 seconds")).start()

  private def await(what: String, q: StreamingQuery)(done: => Boolean): Unit = {
    val deadline = System.currentTimeMillis() + 60000
    while (!done) {
      q.exception.foreach(e => throw e)
      if (System.currentTimeMillis() > deadline) fail(s"timed out waiting for $what: ${q.lastProgress}")
      Thread.sleep(50)
    }
  }

  private val Begin = """"begin":(\d+)""".r.unanchored

  test("a real-time query turns asynchronous progress tracking off with Spark's writer option, for itself only") {
    assert(spark.conf.get(AsyncByDefault) == "true") // Spark 4.3's default
    Journals.create(client, Journals.spec("opts/rt-in/part-000"), Journals.spec("opts/rt-out/a"),
      Journals.spec("opts/rt-out/b"))
    Judge.publishRandom(cluster.broker, "opts/rt-in/part-000", 93L)
    val expected = Judge.read(cluster.broker, "opts/rt-in/part-000").map(_.begin).sorted
    def written = Judge.read(cluster.broker, "opts/rt-out/a").map(_.payload).collect { case Begin(b) => b.toLong }

    val q = start("opts/rt-out/a", Map("asyncProgressTrackingEnabled" -> "false"))
    try {
      await("every row", q)(written.size >= expected.size)
      val at = Option(q.lastProgress).map(_.batchId).getOrElse(-1L)
      await("a batch end", q)(Option(q.lastProgress).exists(_.batchId > at))
      assert(written.sorted == expected)
    } finally q.stop()

    // Without it, Spark 4.3 tracks the query's progress asynchronously, which it allows its own sinks only.
    val e = intercept[IllegalArgumentException](start("opts/rt-out/b", Map.empty))
    assert(e.getMessage.contains("does not support async progress tracking"), e.getMessage)
  }
}
