package io.sparkgazette.spark

import java.nio.file.Files

import io.sparkgazette.testing.{DriverResources, Journals, Judge, OrphanedChannels, SparkClusterSuite}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/** Many epochs of a rate source over 16 partitions into the sink: every row once, as Gazette's
  * ReadCommittedIter sees it, and a driver whose descriptors and threads stay flat.
  * `SINK_EPOCHS=1000` (make test-sink-long) for the long run; the normal suite runs a short one.
  */
class SinkEpochsIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  private val epochs = sys.env.get("SINK_EPOCHS").map(_.toInt).getOrElse(40)
  private val partitions = 16
  private val rowsPerBatch = partitions * 2
  private val warmUp = 10
  private val prefix = "sink/epochs/"

  private def start(checkpoint: String, trigger: Trigger): StreamingQuery =
    spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rowsPerBatch.toString)
      .option("numPartitions", partitions.toString).load()
      .selectExpr("to_json(named_struct('n', value)) AS value", "cast(value AS string) AS key")
      .writeStream.format("gazette").option("broker", cluster.broker).option("selector", s"prefix=$prefix")
      .option("checkpointLocation", checkpoint).trigger(trigger).start()

  /** Runs the query until it has completed batch `last`, then stops it wherever it is: a stop
    * is not an error, whichever call of the connector it interrupts.
    */
  private def runThrough(checkpoint: String, last: Long): Unit = {
    val q = start(checkpoint, Trigger.ProcessingTime(0))
    try
      while (Option(q.lastProgress).forall(_.batchId < last)) {
        q.exception.foreach(e => throw e)
        Thread.sleep(50)
      }
    finally q.stop()
    q.exception.foreach(e => fail(s"stopping the query failed it: ${e.getMessage}"))
  }

  test(s"$epochs epochs over $partitions partitions: each row once, driver descriptors and threads flat, no channel left open") {
    Journals.create(client, (0 until 4).map(i => Journals.spec(f"${prefix}part-$i%03d")): _*)
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    val orphans = OrphanedChannels.watch()
    try {
      runThrough(checkpoint, warmUp)
      val before = DriverResources.now()
      runThrough(checkpoint, warmUp + epochs)
      val after = DriverResources.now()
      // A stop can interrupt an epoch's commit; the restart completes it.
      val last = start(checkpoint, Trigger.AvailableNow())
      last.awaitTermination()
      info(s"driver before: $before, after $epochs more epochs: $after")
      assert(after.fileDescriptors - before.fileDescriptors <= 8, s"file descriptors grew from $before to $after")
      assert(after.threads - before.threads <= 8, s"threads grew from $before to $after: ${after.threadNames}")
      assert(orphans.reported(cluster.broker).isEmpty, "gRPC channels were dropped without being shut down")
    } finally orphans.close()

    val seen = client.list(s"prefix=$prefix").map(_.getSpec.name).flatMap(j => Judge.read(cluster.broker, j))
      .map(r => """"n":(\d+)""".r.findFirstMatchIn(r.payload).get.group(1).toLong)
    assert(seen.size == seen.distinct.size, s"${seen.size - seen.distinct.size} rows are visible twice")
    assert(seen.size >= (warmUp + epochs) * rowsPerBatch)
    assert(seen.sorted == (0L until seen.size.toLong), "some rows are missing")
  }
}
