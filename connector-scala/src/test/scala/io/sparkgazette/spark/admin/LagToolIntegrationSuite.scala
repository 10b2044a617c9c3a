package io.sparkgazette.spark
package admin

import java.nio.file.Files

import com.fasterxml.jackson.databind.ObjectMapper
import io.sparkgazette.client.protocol.JournalSpec
import io.sparkgazette.testing.{Journals, Judge, SparkClusterSuite}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

/** The lag tool ([[Admin.lag]]) on the checkpoints of real queries against a real broker, at its
  * edges: journals the brokers suspended, brokers that cannot be reached.
  */
class LagToolIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  private val mapper = new ObjectMapper()

  // Runs an AvailableNow query over `journals` from the earliest offsets to their heads; its checkpoint.
  private def readToHeads(journals: Seq[String]): String = {
    val ckpt = Files.createTempDirectory("gazette-lag-tool").toString
    val q = spark.readStream.format("gazette").option("broker", cluster.broker)
      .option("journals", journals.mkString(",")).option("startingOffsets", "earliest").load()
      .writeStream.option("checkpointLocation", ckpt).trigger(Trigger.AvailableNow())
      .foreachBatch { (df: DataFrame, _: Long) => df.count(); () }.start()
    try assert(q.awaitTermination(120000), "the query did not finish")
    finally q.stop()
    ckpt
  }

  test("the lag of a query one of whose journals the brokers suspended is told, not an error") {
    val suspended = "lag-tool/suspended/part-000"
    val other = "lag-tool/suspended/part-001"
    Journals.create(client, Journals.spec(suspended), Journals.spec(other))
    val w = Judge.script(cluster.broker, suspended)
    val o = Judge.script(cluster.broker, other)
    try { w.commit(0).commit(0).sync(); o.commit(0).sync() }
    finally o.close()
    val ckpt = readToHeads(Seq(suspended, other))
    val committed = client.writeHead(suspended)
    try { w.commit(0).commit(0).sync() }
    finally w.close()
    val head = client.writeHead(suspended)
    // What brokers' auto-suspension (and `gazctl journals suspend`) records once every fragment is persisted.
    val spec = client.list(s"name=$suspended").head.getSpec
    client.upsert(spec.withSuspend(JournalSpec.Suspend(JournalSpec.Suspend.Level.FULL, head)))
    val report =
      try mapper.readTree(Admin.lag(ckpt, cluster.broker, "{}"))
      catch { case e: Exception => fail(s"the lag tool failed on a suspended journal: $e", e) }
    val rows = report.get("sources").get(0).get("journals")
    val row = (0 until rows.size).map(rows.get).find(_.get("journal").asText == suspended).get
    assert(row.get("committed").asLong == committed, row)
    assert(row.get("bytesBehind").asLong == head - committed, row)
  }

  test("the lag tool against a broker that does not answer says so within seconds") {
    val journal = "lag-tool/unreachable/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    try w.commit(0).sync()
    finally w.close()
    val ckpt = readToHeads(Seq(journal))
    val closed = {
      val s = new java.net.ServerSocket(0);
      try s.getLocalPort
      finally s.close()
    }
    val t0 = System.nanoTime()
    val e = intercept[Exception](Admin.lag(ckpt, s"http://127.0.0.1:$closed", "{}"))
    val seconds = (System.nanoTime() - t0) / 1e9
    assert(e.getMessage.contains(s"127.0.0.1:$closed"), e.getMessage)
    assert(seconds < 30, s"the lag tool took $seconds s to give up on an unreachable broker: ${e.getMessage}")
  }
}
