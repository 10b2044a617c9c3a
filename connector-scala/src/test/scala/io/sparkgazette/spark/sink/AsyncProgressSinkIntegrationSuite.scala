package io.sparkgazette.spark
package sink

import java.nio.file.Files

import io.sparkgazette.testing.{Journals, Judge, SparkClusterSuite}
import org.apache.spark.sql.functions.{col, struct, to_json}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/** A micro-batch query through the exactly-once sink with Spark's writer options
  * `asyncProgressTrackingEnabled=true` and `_asyncProgressTrackingOverrideSinkSupportCheck=true`,
  * which the sink lets through: Spark then persists offsets only every
  * `asyncProgressTrackingCheckpointIntervalMs`, and after a restart plans a batch id the sink has
  * committed already over another range. Judged by Gazette's ReadCommittedIter.
  */
class AsyncProgressSinkIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  private val Async = Map(
    "asyncProgressTrackingEnabled" -> "true",
    "_asyncProgressTrackingOverrideSinkSupportCheck" -> "true",
    "asyncProgressTrackingCheckpointIntervalMs" -> "600000"
  )

  private def start(checkpoint: String): StreamingQuery =
    spark.readStream.format("gazette").option("broker", cluster.broker).option("selector", "prefix=apt/in/")
      .option("startingOffsets", "earliest").load()
      .select(to_json(struct(col("journal"), col("begin"))).as("value"))
      .writeStream.format("gazette").option("broker", cluster.broker).option("journal", "apt/out/a")
      .option("checkpointLocation", checkpoint).options(Async)
      .trigger(Trigger.ProcessingTime("200 milliseconds")).start()

  private def await(what: String, q: StreamingQuery, ms: Long = 60000)(done: => Boolean): Boolean = {
    val deadline = System.currentTimeMillis() + ms
    while (!done) {
      q.exception.foreach(e => throw e)
      if (System.currentTimeMillis() > deadline) return false
      Thread.sleep(100)
    }
    true
  }

  private val Begin = """"begin":(\d+)""".r.unanchored

  private def written: Seq[Long] =
    Judge.read(cluster.broker, "apt/out/a").map(_.payload).collect { case Begin(b) => b.toLong }

  private def input: Seq[Long] = Judge.read(cluster.broker, "apt/in/part-000").map(_.begin)

  test("Spark's writer options let through: asynchronous progress tracking loses no row across a restart") {
    Journals.create(client, Journals.spec("apt/in/part-000"), Journals.spec("apt/out/a"))
    val checkpoint = Files.createTempDirectory("gazette-apt").toString
    Judge.publishEvents(cluster.broker, "apt/in/part-000", 20, seed = 1L)
    val q1 = start(checkpoint)
    try {
      // Three waves, each its own batch: Spark persists the first batch's offsets only.
      for (wave <- 2 to 4) {
        val seen = input.size
        assert(await(s"wave ${wave - 1} written", q1)(written.size >= seen), s"${q1.lastProgress}")
        Judge.publishEvents(cluster.broker, "apt/in/part-000", 20, seed = wave.toLong)
      }
      val all = input.size
      assert(await("every row written", q1)(written.size >= all), s"${q1.lastProgress}")
    } finally q1.stop()
    assert(written.sorted == input.sorted, "the first run wrote each row once")

    // The restart plans batch 1 again, from batch 0's end to the journal's end now.
    Judge.publishEvents(cluster.broker, "apt/in/part-000", 20, seed = 5L)
    val expected = input.sorted
    val q2 = start(checkpoint)
    try await("every row after the restart", q2, 30000)(written.size >= expected.size)
    finally q2.stop()
    val got = written.sorted
    assert(got == expected,
      s"${expected.size} input rows, ${got.distinct.size} written (${expected.diff(got).size} lost, " +
        s"${got.size - got.distinct.size} twice)")
  }
}
