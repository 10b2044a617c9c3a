package io.sparkgazette.spark
package sink

import java.nio.file.attribute.PosixFilePermissions
import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import io.sparkgazette.client.RegisterProbe
import io.sparkgazette.testing.{Journals, Judge, SparkClusterSuite}
import org.apache.spark.sql.functions.col
import org.scalatest.funsuite.AnyFunSuite

/** Plain batch writes (no batchId) that stage their large runs: what a failed one leaves on its
  * journals and under its staging location, who can read what they stage, and how a location
  * that does not work fails them.
  */
class PlainWriteStagingIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  override protected def sparkMaster: String = "local[2,2]"

  private def committedNumbers(journal: String): Seq[Long] =
    Judge.read(cluster.broker, journal).map(r => """"n":(\d+)""".r.findFirstMatchIn(r.payload).get.group(1).toLong)

  private def stagedMessages(journal: String): Seq[String] =
    Judge.read(cluster.broker, journal, committed = false).filter(_.flags == 0).map(_.uuid)

  private def messages(e: Throwable): String =
    Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")

  /** 400 rows over 2 partitions; a reader ring of 16 stages every task's run. */
  private def write(journal: String, options: Map[String, String]): Unit =
    spark.range(0, 400, 1, 2).selectExpr("to_json(named_struct('n', id)) AS value")
      .write.format("gazette").option("broker", cluster.broker).option("journal", journal)
      .option("readerRingSize", "16").options(options).mode("append").save()

  test("a plain batch write whose commit fails after its staged runs were appended leaves no registers behind") {
    val ok = "sink/out/review-registers-ok/part-000"
    val failed = "sink/out/review-registers-failed/part-000"
    Journals.create(client, Journals.spec(ok), Journals.spec(failed))
    val staging = Files.createTempDirectory("gazette-staging").toUri.toString
    // A write that commits removes its runs' registers.
    write(ok, Map("stagingLocation" -> staging))
    assert(stagedMessages(ok).nonEmpty)
    assert(RegisterProbe.registers(cluster.broker, ok).filter(_._1.startsWith("gazette-sink/")).isEmpty)
    // One whose commit fails after the runs were appended (a driver lost there, the publish
    // job failing part-way) is never run again: nothing removes them.
    val e = intercept[Exception](write(failed,
        Map("stagingLocation" -> staging,
          "test.sinkFault" -> "driver-after-publish:0")))
    assert(messages(e).contains("injected driver failure at driver-after-publish"))
    assert(stagedMessages(failed).nonEmpty)
    val left = RegisterProbe.registers(cluster.broker, failed).filter(_._1.startsWith("gazette-sink/"))
    assert(left.isEmpty, s"${left.size} registers of the failed write are left on $failed for good: ${left.take(3)}")
  }

  test("a plain write staging in Spark's local directory (a shared /tmp) keeps its rows from other users") {
    val journal = "sink/out/review-perms/part-000"
    Journals.create(client, Journals.spec(journal))
    val root = sys.env.getOrElse("SPARK_LOCAL_DIRS",
      spark.sparkContext.getConf.get("spark.local.dir", System.getProperty("java.io.tmpdir"))).split(",").head.trim
    PlainWriteStagingIntegrationSuite.before = PlainWriteStagingIntegrationSuite.stagingDirs(root).toSet
    PlainWriteStagingIntegrationSuite.seen.clear()
    // Partition 1 (rows 200..399) has staged its run by row 350; flushBytes=1 puts it on disk.
    val probe = org.apache.spark.sql.functions.udf { (id: Long) =>
      if (id == 350) PlainWriteStagingIntegrationSuite.record(root)
      id
    }.asNondeterministic()
    spark.range(0, 400, 1, 2).select(probe(col("id")).as("n")).selectExpr("to_json(named_struct('n', n)) AS value")
      .write.format("gazette").option("broker", cluster.broker).option("journal", journal)
      .option("readerRingSize", "16").option("flushBytes", "1").mode("append").save()
    assert(committedNumbers(journal).sorted == (0L until 400L))
    val seen = PlainWriteStagingIntegrationSuite.seen.asScala.toSeq
    assert(seen.exists(_._1.toString.endsWith(".run")), s"no staged run was seen under $root: $seen")
    val readable = seen.filter { case (_, perms) => perms.drop(6) != "---" }
    assert(readable.isEmpty, s"staged rows that any user of the host can read: ${readable.take(4)}")
  }
  test("a stagingLocation that cannot be written fails the write with an error that names stagingLocation") {
    val journal = "sink/out/unwritable-staging/part-000"
    Journals.create(client, Journals.spec(journal))
    // Its parent is a file: no directory can be made there (root ignores permission bits).
    val file = Files.createTempFile("gazette-not-a-directory", "")
    val location = file.toUri.toString + "/staging"
    val e = intercept[Exception](write(journal, Map("stagingLocation" -> location)))
    val message = messages(e)
    assert(committedNumbers(journal).isEmpty)
    assert(message.contains("stagingLocation") && message.contains(location),
      s"the error does not name the option:\n$message")
  }

  test("a plain write given a checkpointLocation the executors do not share: the error names checkpointLocation") {
    spark.conf.set("fs.gzhost.impl", classOf[io.sparkgazette.testing.HostLocalFileSystem].getName)
    spark.conf.set("fs.gzhost.impl.disable.cache", "true")
    try {
      val journal = "sink/out/ckpt-host-local/part-000"
      Journals.create(client, Journals.spec(journal))
      val dir = Files.createTempDirectory("gazette-ckpt")
      val e = intercept[Exception](write(journal, Map("checkpointLocation" -> ("gzhost://" + dir))))
      val message = messages(e)
      assert(message.contains("cannot be seen from the driver"), message)
      assert(message.contains("checkpointLocation"), s"the error names an option the write was not given:\n$message")
      assert(committedNumbers(journal).isEmpty)
    } finally { spark.conf.unset("fs.gzhost.impl"); spark.conf.unset("fs.gzhost.impl.disable.cache") }
  }

  test("a plain batch write that fails leaves nothing under stagingLocation, also when a task stages after the abort") {
    import PlainWriteStagingIntegrationSuite.{ended, failures, reached}
    val journal = "sink/out/failed-write-dir/part-000"
    Journals.create(client, Journals.spec(journal))
    val staging = Files.createTempDirectory("gazette-staging")
    failures.set(0)
    reached = new java.util.concurrent.CountDownLatch(1)
    ended = new java.util.concurrent.CountDownLatch(1)
    // Partition 1's task ends (its abort done) after the job failed: Spark posts its end even so.
    val listener = new org.apache.spark.scheduler.SparkListener {
      override def onTaskEnd(end: org.apache.spark.scheduler.SparkListenerTaskEnd): Unit =
        if (end.taskInfo.index == 1 && reached.getCount == 0) ended.countDown()
    }
    spark.sparkContext.addSparkListener(listener)
    // Both attempts of partition 0's task fail at once; partition 1's task, busy when Spark
    // cancels it, writes on after the job failed and the driver's abort ran.
    val slow = org.apache.spark.sql.functions.udf { (id: Long) =>
      if (id == 0) {
        failures.incrementAndGet()
        throw new IllegalStateException("partition 0 fails")
      }
      if (id == 200) {
        // Busy, as a task in CPU-bound work or in I/O that ignores interrupts is.
        while (failures.get() < 2) Thread.onSpinWait()
        val until = System.nanoTime() + 3000000000L
        while (System.nanoTime() < until) Thread.onSpinWait()
        reached.countDown()
      }
      id
    }.asNondeterministic()
    try {
      val e = intercept[Exception](spark.range(0, 400, 1, 2).select(slow(col("id")).as("n"))
          .selectExpr("to_json(named_struct('n', n)) AS value")
          .write.format("gazette").option("broker", cluster.broker).option("journal", journal)
          .option("stagingLocation", staging.toUri.toString).option("readerRingSize", "16").option("flushBytes", "1")
          .mode("append").save())
      assert(messages(e).contains("partition 0 fails"))
      assert(reached.await(60, java.util.concurrent.TimeUnit.SECONDS), "partition 1's task never got past its wait")
      assert(ended.await(60, java.util.concurrent.TimeUnit.SECONDS), "partition 1's task never ended")
    } finally spark.sparkContext.removeSparkListener(listener)
    assert(committedNumbers(journal).isEmpty)
    val left = {
      val s = Files.walk(staging);
      try s.iterator().asScala.toList.filter(_ != staging)
      finally s.close()
    }
    assert(left.isEmpty, s"left behind under stagingLocation after the write failed: $left")
  }
}

object PlainWriteStagingIntegrationSuite {
  val failures = new java.util.concurrent.atomic.AtomicInteger(0)
  @volatile var reached = new java.util.concurrent.CountDownLatch(1)
  @volatile var ended = new java.util.concurrent.CountDownLatch(1)
  @volatile var before: Set[Path] = Set.empty
  val seen = new java.util.concurrent.ConcurrentLinkedQueue[(Path, String)]()

  def stagingDirs(root: String): Seq[Path] = {
    val s = Files.list(Paths.get(root))
    try s.iterator().asScala.filter(_.getFileName.toString.startsWith("gazette-sink-")).toList
    finally s.close()
  }

  /** The permissions of the staging directories made since `before`, and of their files. */
  def record(root: String): Unit =
    stagingDirs(root).filterNot(before.contains).foreach { dir =>
      val files = {
        val s = Files.list(dir);
        try s.iterator().asScala.toList
        finally s.close()
      }
      (dir +: files).foreach(p =>
        seen.add(p -> PosixFilePermissions.toString(Files.getPosixFilePermissions(p))))
    }
}
