package io.sparkgazette.spark
package sink

import java.nio.file.Files

import io.sparkgazette.testing.{DriverResources, Journals, Judge, OrphanedChannels, SparkClusterSuite}
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/** Many epochs of a rate source over 16 partitions into the sink: every row once, as Gazette's
  * ReadCommittedIter sees it, as many producers as the query has parallelism whatever the
  * number of epochs, and a driver whose descriptors and threads stay flat.
  * `SINK_EPOCHS=1000` (make test-sink-long) for the long run; the normal suite runs a short one.
  */
class SinkEpochsIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  private val epochs = sys.env.get("SINK_EPOCHS").map(_.toInt).getOrElse(40)
  private val partitions = 16
  private val warmUp = 10

  // Two attempts per task, so that an injected task failure is retried within its epoch.
  override protected def sparkMaster: String = "local[2,2]"

  private def start(prefix: String, checkpoint: String, trigger: Trigger, rowsPerBatch: Int,
      extra: Map[String, String] = Map.empty): StreamingQuery =
    spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rowsPerBatch.toString)
      .option("numPartitions", partitions.toString).load()
      .selectExpr("to_json(named_struct('n', value)) AS value", "cast(value AS string) AS key")
      .writeStream.format("gazette").option("broker", cluster.broker).option("selector", s"prefix=$prefix")
      .option("checkpointLocation", checkpoint).options(extra).trigger(trigger).start()

  /** Runs the query until it has completed batch `last`, then stops it wherever it is: a stop
    * is not an error, whichever call of the connector it interrupts.
    */
  private def runThrough(last: Long)(start: Trigger => StreamingQuery): Unit = {
    val q = start(Trigger.ProcessingTime(0))
    try
      while (Option(q.lastProgress).forall(_.batchId < last)) {
        q.exception.foreach(e => throw e)
        Thread.sleep(50)
      }
    finally q.stop()
    q.exception.foreach(e => fail(s"stopping the query failed it: ${e.getMessage}"))
  }

  private def outputs(prefix: String): Seq[String] = {
    val journals = (0 until 4).map(i => f"${prefix}part-$i%03d")
    Journals.create(client, journals.map(Journals.spec(_)): _*)
    journals
  }

  /** Every row of the first `atLeast` or more, once, as Gazette's ReadCommittedIter sees it. */
  private def assertExactlyOnce(journals: Seq[String], atLeast: Long): Unit = {
    val seen = journals.flatMap(j => Judge.read(cluster.broker, j))
      .map(r => """"n":(\d+)""".r.findFirstMatchIn(r.payload).get.group(1).toLong)
    val twice = seen.size - seen.distinct.size
    assert(twice == 0, s"$twice rows are visible twice")
    assert(seen.size >= atLeast, s"${seen.size} rows, expected at least $atLeast")
    assert(seen.sorted == (0L until seen.size.toLong), "some rows are missing")
  }

  /** The producers whose messages or ACKs each journal holds. */
  private def producers(journals: Seq[String]): Seq[Int] =
    journals.map(j => Judge.read(cluster.broker, j, committed = false).map(_.uuid.takeRight(12)).distinct.size)

  test(
    s"$epochs epochs over $partitions partitions: each row once, producers bounded, driver descriptors and threads flat, no channel left open") {
    val prefix = "sink/epochs/plain/"
    val journals = outputs(prefix)
    val rowsPerBatch = partitions * 2
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    val orphans = OrphanedChannels.watch()
    try {
      runThrough(warmUp)(start(prefix, checkpoint, _, rowsPerBatch))
      val before = DriverResources.now()
      runThrough(warmUp + epochs)(start(prefix, checkpoint, _, rowsPerBatch))
      val after = DriverResources.now()
      // A stop can interrupt an epoch's commit; the restart completes it.
      start(prefix, checkpoint, Trigger.AvailableNow(), rowsPerBatch).awaitTermination()
      info(s"driver before: $before, after $epochs more epochs: $after")
      // A leak grows with the epochs (one an epoch is 40 here); a JVM that opens a jar or a socket
      // for the first time on the way does not.
      assert(
        after.fileDescriptors - before.fileDescriptors <= epochs / 2, s"file descriptors grew from $before to $after")
      assert(after.threads - before.threads <= epochs / 2, s"threads grew from $before to $after")
      assert(orphans.reported(cluster.broker).isEmpty, "gRPC channels were dropped without being shut down")
    } finally orphans.close()
    assertExactlyOnce(journals, (warmUp + epochs) * rowsPerBatch.toLong)
    val counts = producers(journals)
    info(s"producers per journal after ${warmUp + epochs}+ epochs of $partitions partitions: ${counts.mkString(", ")}")
    // One per partition and epoch parity in each of the three runs: see SinkProducers.
    assert(counts.forall(_ <= 3 * 2 * partitions), s"producers per journal: ${counts.mkString(", ")}")
  }

  // A failed attempt's abort rolls back what it appended; a lost one (its executor died) leaves
  // it open, and only the producer's next attempt, rolling back before it writes, keeps it out; a
  // late one's appends land after later epochs committed under the producer of its partition.
  for ((fault, how) <- Seq("task-after-half" -> "failing", "task-lost-after-half" -> "lost",
      "task-late-after-half" -> "lost with its appends landing late")) {
    test(s"a task $how after appending part of its rows, every fourth epoch: each row once, producers bounded") {
      val prefix = s"sink/epochs/$fault/"
      val journals = outputs(prefix)
      val rowsPerBatch = partitions * 8
      val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
      // Partition 0's first attempt fails in epochs 1, 5, 9, ... and succeeds in 3, 7, 11, ...
      // under its partition's next generation of producers.
      val failed = new java.util.concurrent.atomic.AtomicInteger()
      val listener = new SparkListener {
        override def onTaskEnd(end: SparkListenerTaskEnd): Unit =
          if (!end.taskInfo.successful) failed.incrementAndGet()
      }
      spark.sparkContext.addSparkListener(listener)
      try {
        runThrough(20)(start(prefix, checkpoint, _, rowsPerBatch, Map("test.sinkFault" -> s"$fault:1/4")))
        start(prefix, checkpoint, Trigger.AvailableNow(), rowsPerBatch).awaitTermination()
      } finally spark.sparkContext.removeSparkListener(listener)
      // The failed attempts did write, and what they wrote is never acknowledged.
      val written = journals.flatMap(j => Judge.read(cluster.broker, j, committed = false)).count(_.flags == 1)
      assertExactlyOnce(journals, 20L * rowsPerBatch)
      assert(written > 20 * rowsPerBatch + 4 * 5)
      val counts = producers(journals)
      info(s"producers per journal with a retried task every fourth epoch: ${counts.mkString(", ")}")
      info(s"failed task attempts: ${failed.get}")
      // Two runs; each failed attempt adds its retry's producer and its partition's next
      // generation's two (one per epoch parity).
      assert(counts.forall(_ <= 2 * 2 * partitions + 3 * failed.get),
        s"producers per journal: ${counts.mkString(", ")}")
    }
  }

  // An append the client retried after a timeout can land twice, its first copy late. A copy of a
  // task's append that lands after its epoch committed holds only messages at or below the
  // producer's last ACK, which readers drop as duplicates, and nothing that rewinds them to an
  // older clock: the producer's next ACK, two epochs later, commits its own messages only.
  test("a task's appends landing again after its epoch committed, every fourth epoch: each row once") {
    val prefix = "sink/epochs/task-appends-again-late/"
    val journals = outputs(prefix)
    val rowsPerBatch = partitions * 8
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    runThrough(20)(start(prefix, checkpoint, _, rowsPerBatch, Map("test.sinkFault" -> "task-appends-again-late:1/4")))
    start(prefix, checkpoint, Trigger.AvailableNow(), rowsPerBatch).awaitTermination()
    // The copies did land: partition 0's rows of epochs 1, 5, ..., 17 are in the journals twice.
    val messages = journals.flatMap(j => Judge.read(cluster.broker, j, committed = false)).count(_.flags == 1)
    assertExactlyOnce(journals, 20L * rowsPerBatch)
    assert(messages >= 20 * rowsPerBatch + 5 * rowsPerBatch / partitions, s"$messages messages")
  }
}
