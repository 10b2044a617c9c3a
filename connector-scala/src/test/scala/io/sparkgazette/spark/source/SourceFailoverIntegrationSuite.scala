package io.sparkgazette.spark
package source

import java.nio.file.Files
import java.util.concurrent.ConcurrentHashMap

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import io.sparkgazette.testing.{Journals, Judge, SparkClusterSuite}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

/** A stream over replicated journals keeps going, exactly once, while a journal's primary
  * broker (the only one the query names) is stopped and restarted.
  */
class SourceFailoverIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  override protected def brokers: Int = 3

  test("a broker restart during the stream fails nothing and loses or repeats no message") {
    val journals = Seq("failover/part-000", "failover/part-001")
    Journals.create(client, journals.map(j => Journals.spec(j, replication = 2)): _*)
    journals.zipWithIndex.foreach { case (j, i) => Judge.publishRandom(cluster.broker, j, 40L + i) }
    val expected =
      journals.flatMap(j => Judge.read(cluster.broker, j).map(r => (r.journal, r.begin, r.end, r.uuid))).toSet

    val batches = new ConcurrentHashMap[Long, Seq[(String, Long, Long, String)]]()
    val q = spark.readStream.format("gazette").option("broker", cluster.broker).option("selector", "prefix=failover/")
      .option("startingOffsets", "earliest").option("maxBytesPerTrigger", "1500").load()
      .writeStream.option("checkpointLocation", Files.createTempDirectory("gazette-ckpt").toString)
      .trigger(Trigger.ProcessingTime(50))
      .foreachBatch { (df: DataFrame, id: Long) =>
        batches.put(
          id,
          df.select("journal", "begin", "end", "uuid").collect().toSeq
            .map(r => (r.getString(0), r.getLong(1), r.getLong(2), Option(r.getString(3)).getOrElse("")))
        )
        Thread.sleep(100) // spread the stream over the broker's restart
      }
      .start()
    def rows = batches.values().asScala.toSeq.flatten
    def await(what: String, timeout: FiniteDuration)(done: => Boolean): Unit = {
      val deadline = timeout.fromNow
      while (!done && q.isActive && !deadline.isOverdue()) Thread.sleep(50)
      assert(q.exception.isEmpty, q.exception.map(_.getMessage).getOrElse(""))
      assert(done, s"timed out waiting for $what")
    }
    try {
      await("the first batches", 1.minute)(batches.size() >= 3)
      val route = client.list(s"name=${journals.head}").head.getRoute
      val primary = route.members(route.primary).suffix
      cluster.stopBroker(primary.stripPrefix("broker-").toInt)
      await("a new primary", 1.minute) {
        val r = client.list(s"name=${journals.head}").head.getRoute
        r.members.lift(r.primary).exists(_.suffix != primary)
      }
      val during = batches.size()
      // Liveness, not speed: a loaded machine takes a while to route around the stopped broker.
      await("batches without the broker", 3.minutes)(batches.size() > during + 2)
      cluster.startBroker(primary.stripPrefix("broker-").toInt)
      await("every message", 2.minutes)(rows.size >= expected.size)
      q.processAllAvailable()
      assert(rows.size == rows.distinct.size, "a message was emitted twice")
      assert(rows.toSet == expected)
    } finally q.stop()
  }
}
