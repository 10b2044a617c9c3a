package io.sparkgazette.spark
package sink
package realtime

import java.nio.file.Files

import io.sparkgazette.testing.{Journals, Judge, JudgeRecord, RealTimeClusterSuite}
import org.apache.spark.sql.functions.{col, lit, struct, to_json, udf}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/** Real-time tasks run more than once within a run of the query (`local[4,2]`: a failed task is
  * retried), judged by Gazette's own ReadCommittedIter: a zombie attempt (in every batch with
  * rows, the first attempt of the task), given up on by Spark but still appending while its retry
  * writes the same rows, costs no row of either, and the rows of messages with a UUID stay
  * exactly once.
  */
class RealTimeAttemptsIntegrationSuite extends AnyFunSuite with RealTimeClusterSuite {
  override protected def sparkMaster: String = "local[4,2]"

  private val Row = """"journal":"([^"]+)","begin":(\d+)""".r.unanchored

  private def written(output: String, committed: Boolean = true): Seq[(String, Long)] =
    Judge.read(cluster.broker, output, committed = committed).map(_.payload).collect { case Row(j, b) =>
      (j, b.toLong)
    }

  /** `n` messages in `input`, every other without a UUID; the others committed by two producers. */
  private def mixed(input: String, n: Int): Unit = {
    val w = Judge.script(cluster.broker, input)
    try {
      (0 until n).foreach(i => if (i % 2 == 1) w.noUuid() else w.commit(i % 4 / 2))
      w.sync()
    } finally w.close()
  }

  // The retry writes its rows over seconds, while the zombie appends what it held.
  private val slow = udf((b: Long) => { Thread.sleep(1); b })

  private def start(input: String, output: String, guarantee: String, zombies: String = "task-zombie:0/1",
      duration: String = "5 seconds", target: String = "journal"): StreamingQuery =
    spark.readStream.format("gazette").option("broker", cluster.broker).option("selector", s"name=$input")
      .option("startingOffsets", "earliest").option("realTimePartitions", "1").load()
      .select(to_json(struct(col("journal"), slow(col("begin")).as("begin"), lit(0).as("k"))).as("value"),
        struct(col("journal"), col("uuid")).as("origin"))
      .writeStream.format("gazette").option("broker", cluster.broker).option(target, output)
      .option("deliveryGuarantee", guarantee).option("test.sinkFault", zombies)
      .option("checkpointLocation", Files.createTempDirectory("gazette-rt-zombie").toString).outputMode("update")
      .trigger(Trigger.RealTime(duration)).start()

  private def zombieAndRetry(name: String, guarantee: String): (Seq[(String, Long)], Seq[JudgeRecord]) = {
    val (input, output) = (s"sink/rt-$name-in/part-000", s"sink/rt-$name-out/part-000")
    Journals.create(client, Journals.spec(input), Journals.spec(output))
    mixed(input, 3000)
    val inputs = Judge.read(cluster.broker, input)
    val q = start(input, output, guarantee)
    try {
      val deadline = System.currentTimeMillis() + 120000
      // Until a batch ends at the write head: a batch ends with its deadline, which a retry keeps.
      val head = client.writeHead(input)
      def end = Option(q.lastProgress).flatMap(p => Option(p.sources.head.endOffset))
        .map(source.offsets.JournalOffsets.fromJson)
      while (!end.exists(_.get(input).exists(_ >= head)) && q.exception.isEmpty) {
        assert(System.currentTimeMillis() < deadline, s"no batch ended at the write head $head: ${q.lastProgress}")
        Thread.sleep(100)
      }
      assert(q.exception.isEmpty, q.exception)
    } finally q.stop()
    val rows = written(output)
    val lost = inputs.map(r => (r.journal, r.begin)).diff(rows)
    if (lost.nonEmpty) fail(s"${lost.size} rows lost, e.g. ${lost.take(5)}")
    // The zombie's rows landed while the retry wrote: more copies than rows were appended.
    assert(written(output, committed = false).size > inputs.size + 10, "the zombie appended nothing")
    (rows, inputs)
  }

  test("a zombie attempt appending beside its retry loses no row, and rows with an origin stay exactly once") {
    val (rows, inputs) = zombieAndRetry("zombie-once", "exactly-once")
    val withUuid = inputs.filter(r => r.uuid.nonEmpty && r.uuid != "00000000-0000-0000-0000-000000000000").map(r =>
      (r.journal, r.begin)).toSet
    val repeated = rows.diff(rows.distinct).filter(withUuid.contains)
    if (repeated.nonEmpty) fail(s"rows with an origin visible twice: ${repeated.take(5)}")
  }

  test("a zombie attempt of an at-least-once write loses no row beside its retry") {
    zombieAndRetry("zombie-alo", "at-least-once")
  }

  test("the batch after one that a task's retry committed places its rows over that batch's journals") {
    // The zombie may have written rows past where its retry ended: the next batch writes them
    // again under the same UUIDs, and must place them where the zombie did.
    val input = "sink/rt-retried-in/part-000"
    val outputs = Seq("sink/rt-retried-out/part-000", "sink/rt-retried-out/part-001")
    val added = "sink/rt-retried-out/part-002"
    Journals.create(client, (input +: outputs).map(Journals.spec(_)): _*)
    val w = Judge.script(cluster.broker, input)
    try {
      (0 until 200).foreach(_ => w.commit(0))
      w.sync()
      val q = start(input, "prefix=sink/rt-retried-out/", "exactly-once", zombies = "task-zombie:0",
        duration = "10 seconds", target = "selector")
      def batches = Option(q.lastProgress).map(_.batchId + 1).getOrElse(0L)
      def await(what: String)(done: => Boolean): Unit = {
        val deadline = System.currentTimeMillis() + 60000
        while (!done) {
          assert(q.exception.isEmpty, q.exception)
          assert(System.currentTimeMillis() < deadline, s"timed out waiting for $what: ${q.lastProgress}")
          Thread.sleep(50)
        }
      }
      try {
        await("batch 0's rows")(outputs.map(written(_)).map(_.size).sum >= 200)
        assert(batches == 0, "batch 0 ended before the journal was added")
        Journals.create(client, Journals.spec(added))
        await("batch 0's end")(batches >= 1)
        (0 until 100).foreach(_ => w.commit(0))
        w.sync()
        await("batch 1's rows")((outputs :+ added).map(written(_)).map(_.size).sum >= 300)
        assert(batches == 1, "batch 1 ended before its rows were written")
      } finally q.stop()
    } finally w.close()
    assert(written(added, committed = false).isEmpty, "batch 1 placed rows on a journal listed after batch 0")
  }
}
