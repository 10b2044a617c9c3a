package io.sparkgazette.spark
package reflection

import java.nio.file.Files
import java.util.UUID

import io.sparkgazette.spark.testing.ThisSpark
import io.sparkgazette.testing.SparkSuite
import org.scalatest.funsuite.AnyFunSuite

/** What the connector finds in Spark by name, on the Spark it runs on: Spark may rename any of it. */
class ReflectionSuite extends AnyFunSuite with SparkSuite {
  test("real-time mode is found where this Spark has it") {
    assert(RealTimeMode.available == ThisSpark.hasRealTimeMode)
  }

  test("a running query's execution and run are found from any session, a restart is a new run, a stopped query none") {
    val checkpoint = Files.createTempDirectory("active-query").toString
    def start() = spark.readStream.format("rate").load().writeStream.format("noop")
      .option("checkpointLocation", checkpoint).start()
    val first = start()
    val id = first.id.toString
    try {
      // The connector asks from the query's own session, a clone of the one that started it.
      assert(ActiveQuery.runId(spark.newSession(), id).get == first.runId.toString)
      assert(ActiveQuery.find(spark, id).get.getClass.getSimpleName.endsWith("Execution"))
    } finally first.stop()
    assert(ActiveQuery.find(spark, id).isFailure)
    val again = start()
    try {
      assert(again.id.toString == id && again.runId != first.runId)
      assert(ActiveQuery.runId(spark, id).get == again.runId.toString)
    } finally again.stop()
    val unknown = ActiveQuery.find(spark, UUID.randomUUID().toString)
    assert(unknown.failed.get.getMessage.startsWith("no active query"))
  }
}
