package io.sparkgazette.spark
package sink

import java.nio.file.Files

import io.sparkgazette.testing.{Journals, Judge, SparkClusterSuite}
import org.apache.spark.sql.functions.{array, col, concat, explode, lit, struct, to_json}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/** Gazette → Spark → Gazette in real-time mode (`Trigger.RealTime`), judged by Gazette's own
  * ReadCommittedIter on the output journals: each row visible while its batch still runs, and
  * every row exactly once although a batch stopped mid-way runs again from its start.
  */
class RealTimeSinkIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  override protected def sparkMaster: String = "local[3]"

  override def beforeAll(): Unit = {
    super.beforeAll()
    spark.conf.set("spark.sql.streaming.realTimeMode.minBatchDuration", "1s")
    spark.conf.set("spark.sql.streaming.realTimeMode.asyncProgressTrackingByDefault.enabled", "false")
    spark.conf.set("spark.sql.streaming.realTimeMode.allowlistCheck", "false")
  }

  private def await(what: String, timeoutMs: Long = 60000)(done: => Boolean): Unit = {
    val deadline = System.currentTimeMillis() + timeoutMs
    while (!done) {
      if (System.currentTimeMillis() > deadline)
        fail(s"timed out waiting for $what" + spark.streams.active.map(q =>
          s"; query ${q.id}: ${q.lastProgress}, ${q.exception}").mkString)
      Thread.sleep(50)
    }
  }

  private def batchesDone(q: StreamingQuery): Long = Option(q.lastProgress).map(_.batchId + 1).getOrElse(0L)

  /** Each input message as two rows (k = 0, 1), keyed by their input, with their origin. */
  private def start(input: String, output: String, checkpoint: String, duration: String,
      origin: Boolean = true): StreamingQuery = {
    val rows = spark.readStream.format("gazette").option("broker", cluster.broker).option("selector", input)
      .option("startingOffsets", "earliest").option("realTimePartitions", "2").load()
      .withColumn("k", explode(array(lit(0), lit(1))))
      .select(
        Seq(to_json(struct(col("journal"), col("begin"), col("k"))).as("value"),
          concat(col("journal"), col("begin").cast("string")).as("key")) ++
          (if (origin) Seq(struct(col("journal"), col("uuid")).as("origin")) else Nil): _*)
    rows.writeStream.format("gazette").option("broker", cluster.broker).option("selector", output)
      .option("checkpointLocation", checkpoint).outputMode("update").trigger(Trigger.RealTime(duration)).start()
  }

  private val Row = """"journal":"([^"]+)","begin":(\d+),"k":(\d)""".r.unanchored

  private def written(outputs: Seq[String], committed: Boolean = true): Seq[(String, Long, Int)] =
    outputs.flatMap(j => Judge.read(cluster.broker, j, committed = committed)).map(_.payload).collect {
      case Row(j, b, k) => (j, b.toLong, k.toInt)
    }

  test("rows are visible while their real-time batch runs, and exactly once when a stopped batch runs again") {
    val inputs = Seq("sink/rt-in/part-000", "sink/rt-in/part-001")
    val outputs = Seq("sink/rt-out/part-000", "sink/rt-out/part-001")
    Journals.create(client, (inputs ++ outputs).map(Journals.spec(_)): _*)
    Judge.publishRandom(cluster.broker, inputs.head, 71L)
    val w = Judge.script(cluster.broker, inputs(1))
    val checkpoint = Files.createTempDirectory("gazette-rt-sink").toString
    def expected =
      inputs.flatMap(j => Judge.read(cluster.broker, j)).flatMap(r => Seq(0, 1).map((r.journal, r.begin, _)))
    try {
      w.commit(0).continue(1).continue(1).sync()
      val first = start("prefix=sink/rt-in/", "prefix=sink/rt-out/", checkpoint, "10 seconds")
      try {
        await("the backlog")(written(outputs).size == expected.size)
        // Right after a batch ends, a message committed: its rows come long before the next end.
        val at = batchesDone(first)
        await("a batch end")(batchesDone(first) > at)
        val batch = batchesDone(first)
        val t0 = System.currentTimeMillis()
        w.ack(1).commit(2).sync()
        await("the new rows")(written(outputs).size == expected.size)
        val latencyMs = System.currentTimeMillis() - t0
        assert(batchesDone(first) == batch, s"a batch ended before the rows were visible ($latencyMs ms)")
        // Rows of the batch that is stopped below, before it ends: they are written again.
        w.commit(3).continue(4).commit(2).sync()
        await("the rows of the batch to be stopped")(written(outputs).size == expected.size)
        assert(batchesDone(first) == batch)
      } finally first.stop()

      w.ack(4).commit(0).sync()
      val second = start("prefix=sink/rt-in/", "prefix=sink/rt-out/", checkpoint, "3 seconds")
      try {
        await("every row")(written(outputs).size >= expected.size)
        val at = batchesDone(second)
        await("a batch end after a restart")(batchesDone(second) > at)
        val rows = written(outputs)
        if (rows.size != rows.distinct.size) fail(s"rows visible twice: ${rows.diff(rows.distinct).take(5)}")
        val (lost, extra) = (expected.diff(rows), rows.diff(expected))
        if (lost.nonEmpty || extra.nonEmpty) fail(s"lost ${lost.take(5)}, extra ${extra.take(5)}")
        // The stopped batch's rows were appended twice; readers took each once.
        assert(written(outputs, committed = false).size > rows.size, "no row was written again")
      } finally second.stop()
    } finally w.close()
  }

  test("an exactly-once real-time write without the rows' origin is refused, naming the column") {
    val input = "sink/rt-refused-in/part-000"
    val output = "sink/rt-refused-out/part-000"
    Journals.create(client, Journals.spec(input), Journals.spec(output))
    Judge.publishEvents(cluster.broker, input, 3)
    val q = start(s"name=$input", s"name=$output", Files.createTempDirectory("gazette-rt-refused").toString,
      "3 seconds", origin = false)
    val e = intercept[Exception](q.awaitTermination(120000))
    assert(e.getMessage.contains("GAZETTE_SINK_INVALID_COLUMNS") && e.getMessage.contains("origin"), e.getMessage)
  }
}
