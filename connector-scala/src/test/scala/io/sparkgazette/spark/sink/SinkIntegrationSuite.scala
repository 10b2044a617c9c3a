package io.sparkgazette.spark
package sink

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import io.sparkgazette.message.Flags
import io.sparkgazette.spark.hadoop.SerializableConfiguration
import io.sparkgazette.spark.sink.config.{SinkColumns, SinkConfig, SinkOptions, StagingLocation}
import io.sparkgazette.spark.sink.metrics.SinkMetrics
import io.sparkgazette.spark.sink.staging.{StagedRunWriter, StagedRuns}
import io.sparkgazette.spark.testing.ThisSpark
import io.sparkgazette.testing.{Journals, Judge, JudgeRecord, MovedUuids, SparkClusterSuite}
import org.apache.spark.sql.functions.{col, struct}
import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryProgress, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/** Gazette → Spark → Gazette, exactly once through ACK intents, judged by Gazette's own
  * ReadCommittedIter on the output journals, also when a task or the driver fails at each
  * point of the protocol and the query restarts from its checkpoint.
  */
class SinkIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  private var expected: Set[(String, Long)] = _

  // Two attempts per task, so that an injected task failure is retried within its job.
  override protected def sparkMaster: String = "local[2,2]"

  override def beforeAll(): Unit = {
    super.beforeAll()
    val inputs = (0 until 3).map(i => f"sink/in/part-$i%03d")
    Journals.create(client, inputs.map(Journals.spec(_)): _*)
    inputs.zipWithIndex.foreach { case (j, i) => Judge.publishRandom(cluster.broker, j, 60L + i) }
    expected = inputs.flatMap(j => Judge.read(cluster.broker, j).map(r => (r.journal, r.begin))).toSet
  }

  private def outputs(name: String): String = {
    Journals.create(client, (0 until 3).map(i => Journals.spec(f"sink/out/$name/part-$i%03d")): _*)
    s"prefix=sink/out/$name/"
  }

  /** The pipeline: read committed, keep each message's identity, write JSON rows keyed by source. */
  private def run(selector: String, checkpoint: String, extra: Map[String, String] = Map.empty,
      queryName: Option[String] = None, trigger: Trigger = Trigger.AvailableNow()): StreamingQuery = {
    val writer = spark.readStream.format("gazette").option("broker", cluster.broker).option(
      "selector", "prefix=sink/in/")
      .option("startingOffsets", "earliest").option("maxBytesPerTrigger", "4000").load()
      .select(col("journal").as("src"), col("begin"), col("uuid"), col("journal").as("key"))
      .writeStream.format("gazette").option("broker", cluster.broker).option("selector", selector)
      .option("checkpointLocation", checkpoint).options(extra)
      .trigger(trigger)
    val q = queryName.fold(writer)(writer.queryName).start()
    assert(q.awaitTermination(600000), "the query did not end within 10 minutes")
    q
  }

  /** What Gazette's ReadCommittedIter sees in the outputs, as (source journal, source offset). */
  private def committedOutput(selector: String): Seq[(String, Long)] = placedOutput(selector).map(_._2)

  /** The same, with the output journal each row is in. */
  private def placedOutput(selector: String): Seq[(String, (String, Long))] = {
    val journals = client.list(selector).map(_.getSpec.name)
    journals.flatMap(j => Judge.read(cluster.broker, j)).map { r =>
      val src = """"src":"([^"]+)"""".r.findFirstMatchIn(r.payload).get.group(1)
      val begin = """"begin":(\d+)""".r.findFirstMatchIn(r.payload).get.group(1).toLong
      r.journal -> (src, begin)
    }
  }

  /** Each row is in the journal Gazette's own mapping (`modulo` or `rendezvous`) picks for its key. */
  private def assertPlaced(selector: String, mapping: String): Unit = {
    val journals = client.list(selector).map(_.getSpec.name).sorted
    val keys = expected.map(_._1).toSeq.sorted
    val picks = keys.zip(Judge.map(journals, keys)).map { case (k, (modulo, rendezvous)) =>
      k -> (if (mapping == "modulo") modulo else rendezvous)
    }.toMap
    val misplaced = placedOutput(selector).filter { case (j, (src, _)) => picks(src) != j }
    assert(misplaced.isEmpty, s"${misplaced.size} rows not where $mapping puts their key: ${misplaced.take(3)}")
  }

  private def assertExactlyOnce(selector: String): Unit = {
    val seen = committedOutput(selector)
    assert(seen.size == seen.distinct.size, s"${seen.size - seen.distinct.size} rows are visible twice")
    assert(
      seen.toSet == expected, s"missing ${(expected -- seen.toSet).size}, unexpected ${(seen.toSet -- expected).size}")
  }

  test("a streaming pipeline writes every input row exactly once, as Gazette's ReadCommittedIter sees it") {
    val out = outputs("plain")
    run(out, Files.createTempDirectory("gazette-ckpt").toString)
    assertExactlyOnce(out)
    assertPlaced(out, "rendezvous")
  }

  /** A sink metric summed over a stream's progress. */
  private def progressed(q: StreamingQuery, metric: String): Long =
    q.recentProgress.toSeq.map(p => Option(p.sink.metrics.get(metric)).fold(0L)(_.toLong)).sum

  /** The bytes in the journals of `selector`, as their brokers count them (fresh journals: all the sink's). */
  private def headsOf(selector: String): Long = client.list(selector).map(j => client.writeHead(j.getSpec.name)).sum

  /** The ACK intents Gazette's reader finds in the journals of `selector`: ACKs that commit messages
    * their producer wrote since its last ACK (not a rollback's, which commits none).
    */
  private def intentsIn(selector: String): Int = client.list(selector).map(_.getSpec.name).map { j =>
    val open = scala.collection.mutable.Set[String]()
    Judge.read(cluster.broker, j, committed = false).count { r =>
      val producer = r.uuid.split('-').last
      if (r.flags == Flags.ContinueTxn) { open += producer; false }
      else r.flags == Flags.AckTxn && open.remove(producer)
    }
  }.sum

  test("a stream's progress counts the rows, bytes, appends and ACK intents Gazette sees written, epoch by epoch") {
    val out = outputs("metrics")
    val q = run(out, Files.createTempDirectory("gazette-ckpt").toString)
    assertExactlyOnce(out)
    val progress: Seq[StreamingQueryProgress] = q.recentProgress.toSeq.filter(_.sink.numOutputRows > 0)
    assert(progress.size >= 3, "fewer than three epochs wrote rows")
    assert(progress.forall(p => p.sink.metrics.get(SinkMetrics.RowsWritten).toLong == p.sink.numOutputRows))
    assert(progressed(q, SinkMetrics.RowsWritten) == expected.size)
    assert(progressed(q, SinkMetrics.BytesAppended) == headsOf(out))
    val intents = intentsIn(out)
    assert(progressed(q, SinkMetrics.AckIntentsWritten) == intents)
    // A task's run in a journal is one append, as is the driver's ACKs of an epoch in a journal.
    val appends = progressed(q, SinkMetrics.Appends)
    assert(appends >= intents + progress.size && appends <= intents + 3L * progress.size,
      s"$appends appends for $intents intents in ${progress.size} epochs")
    assert(progressed(q, SinkMetrics.BytesStaged) == 0)
  }

  test("a stream that stages counts the bytes staged, and the staged runs' appends with the rest") {
    val out = outputs("metrics-staged")
    val q = run(out, Files.createTempDirectory("gazette-ckpt").toString, Map("readerRingSize" -> "16"))
    assertExactlyOnce(out)
    val staged = progressed(q, SinkMetrics.BytesStaged)
    assert(staged > 0 && staged < headsOf(out), s"$staged bytes staged of ${headsOf(out)}")
    assert(progressed(q, SinkMetrics.BytesAppended) == headsOf(out))
    assert(progressed(q, SinkMetrics.RowsWritten) == expected.size)
  }

  /** The SQL metrics of the last query run, by description, once its tasks' metrics have arrived. */
  private def sqlMetrics(): Map[String, Long] = {
    val store = spark.sharedState.statusStore
    val ours = SinkMetrics.Names.map(SinkMetrics.describe).toSet
    def metrics(): Map[String, Long] = {
      val exec = store.executionsList().maxBy(_.executionId)
      val names =
        store.planGraph(exec.executionId).allNodes.flatMap(_.metrics).map(m => m.accumulatorId -> m.name).toMap
      store.executionMetrics(exec.executionId).flatMap { case (id, v) =>
        names.get(id).filter(ours).map(_ -> v.toLong)
      }
    }
    val deadline = System.currentTimeMillis() + 10000
    while (!metrics().contains(SinkMetrics.describe(SinkMetrics.RowsWritten)) && System.currentTimeMillis() < deadline)
      Thread.sleep(100)
    metrics().withDefaultValue(0L)
  }

  test("a batch write's SQL metrics count its rows, and on Spark 4 its appends, bytes and ACK intents") {
    val out = outputs("metrics-batch")
    spark.range(0, 300, 1, 3).selectExpr("to_json(named_struct('n', id)) AS value", "cast(id % 5 AS STRING) AS key")
      .write.format("gazette").option("broker", cluster.broker).option("selector", out).mode("append").save()
    val m = sqlMetrics()
    def metric(name: String) = m(SinkMetrics.describe(name))
    val read = client.list(out).map(_.getSpec.name).flatMap(j => Judge.read(cluster.broker, j))
    assert(metric(SinkMetrics.RowsWritten) == 300 && read.size == 300, m)
    // Exactly once, tasks append as they commit, after Spark took their metrics: the driver reports
    // that, where Spark takes driver metrics.
    if (ThisSpark.takesDriverMetrics) {
      assert(metric(SinkMetrics.BytesAppended) == headsOf(out), m)
      assert(metric(SinkMetrics.AckIntentsWritten) == intentsIn(out), m)
      assert(metric(SinkMetrics.Appends) >= 3, m)
    } else assert(metric(SinkMetrics.BytesAppended) == 0, m)
  }

  test("the modulo mapping puts each key where Gazette's puts it, and random spreads rows over the journals") {
    val modulo = outputs("modulo")
    run(modulo, Files.createTempDirectory("gazette-ckpt").toString, Map("mapping" -> "modulo"))
    assertExactlyOnce(modulo)
    assertPlaced(modulo, "modulo")
    val random = outputs("random")
    run(random, Files.createTempDirectory("gazette-ckpt").toString, Map("mapping" -> "random"))
    assertExactlyOnce(random)
    val used = placedOutput(random).map(_._1).distinct
    assert(used.size > 1, s"random put every row in ${used.mkString}")
  }

  test("a named query writes through the sink: Spark's own options (its name) are not the connector's to refuse") {
    val out = outputs("named")
    run(out, Files.createTempDirectory("gazette-ckpt").toString, queryName = Some("rollups"))
    assertExactlyOnce(out)
  }

  test("Spark's options for asynchronous progress tracking reach Spark through the sink, which Spark then reads") {
    val out = outputs("async-off")
    val off = Map("asyncProgressTrackingEnabled" -> "false", "asyncProgressTrackingCheckpointIntervalMs" -> "1000")
    run(out, Files.createTempDirectory("gazette-ckpt").toString, off, queryName = Some("async-off"))
    assertExactlyOnce(out)
    val on = outputs("async-on")
    def refusal(options: (String, String)*): String = intercept[IllegalArgumentException](
      run(on, Files.createTempDirectory("gazette-ckpt").toString, options.toMap)).getMessage
    // On, Spark refuses this sink as every sink not its own. Its tests' switch past that check is
    // the sink's to refuse: with it, a query that wrote four batches, stopped and restarted read
    // back 78 of 98 rows (Spark planned batch 1 again over a longer range, already committed).
    // Spark takes such a query (a processing-time trigger); the sink refuses it as its first
    // batch is planned, before a row is written.
    assert(refusal("asyncProgressTrackingEnabled" -> "true").contains("does not support async progress tracking"))
    val overridden = intercept[Exception](run(
        on,
        Files.createTempDirectory("gazette-ckpt").toString,
        Map("asyncProgressTrackingEnabled" -> "true", "_asyncProgressTrackingOverrideSinkSupportCheck" -> "true"),
        trigger = Trigger.ProcessingTime("1 second")
      ))
    assert(overridden.getMessage.contains("'_asyncProgressTrackingOverrideSinkSupportCheck' has invalid value 'true'"),
      overridden.getMessage)
    assert(committedOutput(on).isEmpty)
  }

  for (fault <- Seq("driver-before-persist", "driver-after-persist", "driver-after-some-acks", "task-after-half")) {
    test(s"exactly once across a failure at $fault and a restart from the checkpoint") {
      val out = outputs(fault)
      val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
      val failing = Map("test.sinkFault" -> s"$fault:1")
      if (fault == "task-after-half") run(out, checkpoint, failing) // the task's second attempt succeeds
      else {
        val e = intercept[Exception](run(out, checkpoint, failing))
        assert(e.getMessage.contains(s"injected driver failure at $fault of epoch 1"))
        run(out, checkpoint)
      }
      assertExactlyOnce(out)
      // An epoch recorded before the failure is committed: run again after the restart, its
      // writers write nothing (what they wrote would only be rolled back).
      if (fault == "driver-after-persist" || fault == "driver-after-some-acks") {
        val written = client.list(out).map(_.getSpec.name)
          .flatMap(j => Judge.read(cluster.broker, j, committed = false)).count(_.flags == Flags.ContinueTxn)
        assert(written == expected.size, s"$written rows written for ${expected.size} input rows")
      }
    }
  }

  for (fault <- Seq("driver-after-persist", "driver-after-publish", "task-after-half")) {
    test(s"staged runs: exactly once across a failure at $fault and a restart from the checkpoint") {
      val out = outputs(s"staged-$fault")
      val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
      // A reader ring of 16 messages stages every run of more than a message or two.
      val staged = Map("readerRingSize" -> "16")
      if (fault == "task-after-half") run(out, checkpoint, staged ++ Map("test.sinkFault" -> s"$fault:1"))
      else {
        val e = intercept[Exception](run(out, checkpoint, staged ++ Map("test.sinkFault" -> s"$fault:1")))
        assert(e.getMessage.contains(s"injected driver failure at $fault of epoch 1"))
        run(out, checkpoint, staged)
      }
      assertExactlyOnce(out)
      val outside =
        client.list(out).map(_.getSpec.name).flatMap(j => Judge.read(cluster.broker, j, committed = false)).count(
          _.flags == 0)
      assert(outside > 0, "no run was staged")
      assert(!Files.exists(java.nio.file.Paths.get(checkpoint, "gazette-sink", "staging", "epochs", "1")),
        "epoch 1's staged runs were not deleted")
    }
  }

  /** The staged (OUTSIDE_TXN) messages in the journals of `selector`, as appended, copies included. */
  private def stagedMessages(selector: String): Seq[String] =
    client.list(selector).map(_.getSpec.name).flatMap(j => Judge.read(cluster.broker, j, committed = false)).filter(
      _.flags == 0).map(_.uuid)

  test("staged runs recorded before a crash are appended even when the restart stages nothing") {
    val out = outputs("staged-then-0")
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    val e = intercept[Exception](run(out, checkpoint,
        Map("readerRingSize" -> "16", "test.sinkFault" -> "driver-after-persist:1")))
    assert(e.getMessage.contains("injected driver failure at driver-after-persist of epoch 1"))
    run(out, checkpoint, Map("readerRingSize" -> "0"))
    assertExactlyOnce(out)
  }

  test("a staged run published again after a crash is appended once, whatever readers remember") {
    val out = outputs("staged-once")
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    val staged = Map("readerRingSize" -> "16")
    intercept[Exception](run(out, checkpoint, staged ++ Map("test.sinkFault" -> "driver-after-publish:1")))
    val before = stagedMessages(out)
    assert(before.nonEmpty && before.size == before.distinct.size)
    run(out, checkpoint, staged)
    assertExactlyOnce(out)
    val after = stagedMessages(out)
    assert(
      after.size == after.distinct.size, s"${after.size - after.distinct.size} staged messages were appended twice")
  }

  for (option <- Seq("checkpointLocation", "stagingLocation")) test(
    s"a $option that the driver and executors do not share fails a write that stages, before anything is recorded") {
    spark.conf.set("fs.gzhost.impl", classOf[io.sparkgazette.testing.HostLocalFileSystem].getName)
    spark.conf.set("fs.gzhost.impl.disable.cache", "true")
    try {
      val journal = s"sink/out/host-local-$option/part-000"
      Journals.create(client, Journals.spec(journal))
      val dir = Files.createTempDirectory("gazette-ckpt")
      val where = if (option == "stagingLocation") Map.empty[String, String] else Map("batchId" -> "b")
      val e = intercept[Exception](spark.range(0, 100, 1, 2).selectExpr("to_json(named_struct('n', id)) AS value")
          .write.format("gazette").option("broker", cluster.broker).option("journal", journal)
          .option(option, "gzhost://" + dir).options(where).option("readerRingSize", "16").mode("append").save())
      val message = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
      assert(message.contains("cannot be seen from the driver") && message.contains(dir.toString), message)
      assert(message.contains(option), message)
      assert(!Files.exists(dir.resolve("gazette-sink/batches/b.json")), "the write was recorded")
      assert(Judge.read(cluster.broker, journal).isEmpty)
      assert(stagedMessages(s"name=$journal").isEmpty)
    } finally { spark.conf.unset("fs.gzhost.impl"); spark.conf.unset("fs.gzhost.impl.disable.cache") }
  }

  /** The `.run` files left under `dir`. */
  private def stagedFiles(dir: java.nio.file.Path): Seq[java.nio.file.Path] = {
    val walk = Files.walk(dir)
    try walk.toArray.toSeq.map(_.asInstanceOf[java.nio.file.Path]).filter(_.getFileName.toString.endsWith(".run"))
    finally walk.close()
  }

  test("a plain batch write stages its large runs under stagingLocation, each row once across a task's retry, " +
    "and deletes them") {
    val journal = "sink/out/plain-staged/part-000"
    Journals.create(client, Journals.spec(journal))
    val staging = Files.createTempDirectory("gazette-staging")
    spark.range(0, 400, 1, 2).selectExpr("to_json(named_struct('n', id)) AS value")
      .write.format("gazette").option("broker", cluster.broker).option("journal", journal)
      .option("stagingLocation", staging.toUri.toString).option("readerRingSize", "16")
      .option("test.sinkFault", "task-after-half:0").mode("append").save()
    assert(committedNumbers(journal).sorted == (0L until 400L))
    val staged = stagedMessages(s"name=$journal")
    assert(staged.nonEmpty && staged.size == staged.distinct.size, s"${staged.size} staged messages appended")
    assert(Files.list(staging).count() == 0, s"left behind: ${stagedFiles(staging)}")
  }

  test("a plain batch write whose task fails mid-write makes none of its rows visible and leaves no staged runs") {
    val journal = "sink/out/plain-failed/part-000"
    Journals.create(client, Journals.spec(journal))
    val staging = Files.createTempDirectory("gazette-staging")
    // Every attempt of partition 0's task fails once it has staged rows; partition 1's commits.
    val failing = org.apache.spark.sql.functions.udf { (id: Long) =>
      if (id == 150) throw new IllegalStateException("a task fails mid-write")
      id
    }
    val e = intercept[Exception](spark.range(0, 400, 1, 2).select(failing(col("id")).as("n"))
        .selectExpr("to_json(named_struct('n', n)) AS value")
        .write.format("gazette").option("broker", cluster.broker).option("journal", journal)
        .option("stagingLocation", staging.toUri.toString).option("readerRingSize", "16").mode("append").save())
    assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).exists(
        _.getMessage.contains("a task fails mid-write")), e)
    assert(committedNumbers(journal).isEmpty, "rows of the failed write are visible")
    assert(stagedMessages(s"name=$journal").isEmpty, "staged runs of the failed write were appended")
    // Attempts still running when the job failed delete their runs as Spark kills them.
    val deadline = System.nanoTime() + 10000000000L
    while (stagedFiles(staging).nonEmpty && System.nanoTime() < deadline) Thread.sleep(100)
    assert(stagedFiles(staging).isEmpty, s"left behind: ${stagedFiles(staging)}")
  }

  test(
    "a journal deleted and created again while an epoch's tasks stage runs for it fails the epoch, which runs again") {
    val journal = "sink/out/recreated-mid-epoch/part-000"
    Journals.create(client, Journals.spec(journal))
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    val broker = cluster.broker
    SinkIntegrationSuite.recreateOnce.set(false)
    def write(): Unit = {
      val recreating = org.apache.spark.sql.functions.udf { (id: Long) =>
        // Once partition 0's writer holds rows for the journal, the journal is created again.
        if (id == 100 && SinkIntegrationSuite.recreateOnce.compareAndSet(false, true)) {
          val c = io.sparkgazette.client.GazetteClient(broker)
          try {
            c.apply(Seq(io.sparkgazette.client.protocol.ApplyRequest.Change(expectModRevision = -1, delete = journal)))
            Journals.create(c, Journals.spec(journal))
          } finally c.close()
        }
        id
      }.asNondeterministic()
      spark.range(0, 400, 1, 2).select(recreating(col("id")).as("n")).selectExpr(
        "to_json(named_struct('n', n)) AS value")
        .write.format("gazette").option("broker", broker).option("journal", journal)
        .option("checkpointLocation", checkpoint).option("batchId", "b").option("readerRingSize", "16")
        .mode("append").save()
    }
    val e = intercept[Exception](write())
    val message = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
    assert(message.contains("GAZETTE_JOURNAL_DELETED_DURING_WRITE") && message.contains(journal), message)
    assert(committedNumbers(journal).isEmpty, "part of the failed epoch became visible")
    write()
    assert(committedNumbers(journal).sorted == (0L until 400L))
  }

  test("a journal deleted and created again before its staged runs are published gets none of them") {
    val out = outputs("staged-recreated")
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    val staged = Map("readerRingSize" -> "16")
    intercept[Exception](run(out, checkpoint, staged ++ Map("test.sinkFault" -> "driver-after-persist:0")))
    // What epoch 0 staged for one journal, about to be re-created.
    val runs = Files.walk(java.nio.file.Paths.get(checkpoint, "gazette-sink", "staging")).toArray.map(
      _.asInstanceOf[java.nio.file.Path])
      .filter(_.getFileName.toString.endsWith(".run"))
    assert(runs.nonEmpty, "epoch 0 staged nothing")
    val name = """[0-9]+-[0-9]+-[0-9]+-([0-9]+)\.[0-9]+\.run""".r
    val index = runs.head.getFileName.toString match { case name(i) => i.toInt }
    val recreated = client.list(out).map(_.getSpec.name).sorted.apply(index)
    val lost = runs.filter(_.getFileName.toString match { case name(i) => i.toInt == index; case _ => false }).flatMap(
      p => new String(Files.readAllBytes(p), "UTF-8").linesIterator).map { l =>
      (""""src":"([^"]+)"""".r.findFirstMatchIn(l).get.group(1),
        """"begin":(\d+)""".r.findFirstMatchIn(l).get.group(1).toLong)
    }.toSet
    // Its small runs, appended by the tasks before the crash, go with it too.
    val appended = Judge.read(cluster.broker, recreated, committed = false).filter(_.flags != 2).map { r =>
      (""""src":"([^"]+)"""".r.findFirstMatchIn(r.payload).get.group(1),
        """"begin":(\d+)""".r.findFirstMatchIn(r.payload).get.group(1).toLong)
    }.toSet
    client.apply(Seq(io.sparkgazette.client.protocol.ApplyRequest.Change(expectModRevision = -1, delete = recreated)))
    Files.createDirectories(java.nio.file.Paths.get(cluster.fragmentRoot, "recreated"))
    Journals.create(client, Journals.spec(recreated, store = "file:///recreated/"))
    run(out, checkpoint, staged)
    val seen = committedOutput(out)
    assert(seen.size == seen.distinct.size)
    assert((seen.toSet & lost).isEmpty,
      s"${(seen.toSet & lost).size} rows of the deleted journal's epoch reached the new one")
    assert(seen.toSet == expected -- lost -- appended)
  }

  test("a staged run is appended in parts, each once, however often it is published") {
    val journal = "sink/out/staged-parts/part-000"
    Journals.create(client, Journals.spec(journal))
    val dir = Files.createTempDirectory("gazette-staging")
    val conf = spark.sessionState.newHadoopConf()
    val writer = new StagedRunWriter(
      new org.apache.hadoop.fs.Path(dir.toUri.toString, "0-0-0-0"), "t.0-0-0-0", StagingLocation(dir.toUri.toString),
      conf,
      partBytes = 2000)
    val clock = new io.sparkgazette.message.MonotonicClock()
    val publisher = new io.sparkgazette.message.Publisher(clock = clock)
    val framing = io.sparkgazette.message.Framing.forContentType(io.sparkgazette.message.Framing.JsonLines).toOption.get
    (0 until 100).foreach { n =>
      publisher.publishCommitted(journal, framing, s"""{"n":$n}""".getBytes("UTF-8"))
      if (n % 7 == 6 || n == 99) writer.write(publisher.drain(journal), clock.current)
    }
    val runs = writer.close(
      journal,
      publisher.producer.toString,
      clock.current,
      client.list(s"name=$journal").head.createRevision,
      c => publisher.ackAt(journal, framing, "{}".getBytes("UTF-8"), c).intent
    )
    assert(runs.size > 1 && runs.map(_.part) == runs.indices, s"${runs.size} parts")
    val config = SinkConfig(
      SinkOptions.parse(Map("broker" -> cluster.broker, "journal" -> journal), streaming = false),
      SinkColumns(new org.apache.spark.sql.types.StructType().add("value", "string")),
      None,
      spark.sparkContext.broadcast(new SerializableConfiguration(conf))
    )
    StagedRuns.publish(spark.sparkContext, runs, config, "parts")
    StagedRuns.publish(spark.sparkContext, runs.reverse, config, "parts again")
    assert(committedNumbers(journal) == (0L until 100L))
    assert(stagedMessages(s"name=$journal").size == 100)
    StagedRuns.forget(runs, config)
    assert(committedNumbers(journal) == (0L until 100L))
  }

  // A plain write (no batchId, no checkpoint) stages in Spark's local directory: the suite's
  // master runs on one host.
  for ((partitions, plain) <- Seq((16, false), (200, false), (16, true))) {
    val how = if (plain) "a plain batch write" else "a batchId"
    test(s"an epoch larger than readers' rings costs them no more read committed than uncommitted " +
      s"($partitions partitions, $how)") {
      val journal = s"sink/out/read-cost-$partitions${if (plain) "-plain" else ""}/part-000"
      Journals.create(client, Journals.spec(journal))
      val rows = 20000L
      val recorded =
        if (plain) Map.empty[String, String]
        else Map("checkpointLocation" -> Files.createTempDirectory("gazette-ckpt").toString, "batchId" -> "large")
      spark.range(0, rows, 1, partitions).selectExpr(
        "to_json(named_struct('n', id, 'pad', repeat('x', 1000))) AS value")
        .write.format("gazette").option("broker", cluster.broker).option("journal", journal).options(recorded)
        .mode("append").save()
      assert(committedNumbers(journal).sorted == (0L until rows))
      val (read, committedBytes) = Judge.readCost(cluster.broker, journal, committed = true)
      val (_, uncommittedBytes) = Judge.readCost(cluster.broker, journal, committed = false)
      assert(read == rows)
      assert(uncommittedBytes >= rows * 1000, s"Gazette's reader fetched $uncommittedBytes bytes read uncommitted")
      assert(
        committedBytes <= 1.5 * uncommittedBytes,
        s"Gazette's reader fetched $committedBytes bytes read committed, ${committedBytes.toDouble / uncommittedBytes}x the journal"
      )
      // Our own source, read committed, with its default ring.
      val df =
        spark.read.format("gazette").option("broker", cluster.broker).option("journals", journal).load().select("begin")
      assert(df.collect().length == rows)
      val replayed = df.queryExecution.executedPlan.collectFirst {
        case s: org.apache.spark.sql.execution.datasources.v2.BatchScanExec => s.metrics("replayedBytes").value
      }.get
      assert(replayed <= 0.5 * uncommittedBytes, s"the source replayed $replayed bytes of $uncommittedBytes")
    }
  }

  /** What Gazette's ReadCommittedIter sees of `journal`'s `{"n": ...}` rows. */
  private def committedNumbers(journal: String): Seq[Long] =
    Judge.read(cluster.broker, journal).map(r => """"n":(\d+)""".r.findFirstMatchIn(r.payload).get.group(1).toLong)

  private def batchWrite(journal: String, from: Long, checkpoint: String, extra: Map[String, String] = Map.empty)
      : Unit =
    spark.range(from, from + 10, 1, 2).selectExpr("to_json(named_struct('n', id)) AS value")
      .write.format("gazette").option("broker", cluster.broker).option("journal", journal)
      .option("checkpointLocation", checkpoint).options(extra).mode("append").save()

  test("uuidPointer: the sink puts each message's UUID there, and its output, moved to Gazette's place, reads " +
    "every row once") {
    val journal = "sink/out/uuid-pointer/part-000"
    val scratch = "sink/out/uuid-pointer-go/part-000"
    Journals.create(client, Journals.spec(journal), Journals.spec(scratch))
    val path = Seq("meta", "id")
    spark.range(0, 60, 1, 3).selectExpr("to_json(named_struct('n', id)) AS value").write.format("gazette")
      .option("broker", cluster.broker).option("journal", journal).option("uuidPointer", "/meta/id")
      .mode("append").save()
    val written = Judge.read(cluster.broker, journal, committed = false)
    assert(
      written.nonEmpty && written.forall(r => r.uuid.isEmpty && MovedUuids.at(r.payload, path).nonEmpty),
      s"not every message has its UUID at /meta/id alone: ${written.take(3)}"
    )
    val moved = Judge.script(cluster.broker, scratch)
    try {
      written.foreach(r =>
        moved.raw((MovedUuids.place(MovedUuids.strip(r.payload, path), MovedUuids.at(r.payload, path),
            Seq("_meta", "uuid")) + "\n").getBytes(UTF_8)))
      moved.sync()
    } finally moved.close()
    assert(committedNumbers(scratch).sorted == (0L until 60L))
  }

  test("copies of documents Gazette's Publisher wrote, by a batch write and a stream: each committed document " +
    "once, its /_meta/uuid replaced by a new UUID and the rest as it was") {
    val inputs = Seq("sink/copy-in/events", "sink/copy-in/duplicates")
    Journals.create(client, inputs.map(Journals.spec(_)): _*)
    // Transactions, rollbacks and re-sent duplicates, each document with its UUID at /_meta/uuid.
    Judge.publishEvents(cluster.broker, inputs(0), 300, seed = 11L)
    Judge.publishScenario(cluster.broker, inputs(1), "duplicates")
    val committed = inputs.flatMap(j => Judge.read(cluster.broker, j))
    assert(committed.nonEmpty && committed.forall(_.uuid.nonEmpty))
    // A document as Gazette's reader sees it, the UUID it found at /_meta/uuid cut out of its text.
    def withoutUuid(r: JudgeRecord): String = {
      assert(MovedUuids.at(r.payload, Seq("_meta", "uuid")) == r.uuid, r)
      r.payload.replace(r.uuid, "")
    }
    val expected = committed.map(withoutUuid).sorted
    def copies(reader: org.apache.spark.sql.DataFrame) =
      reader.select(col("value"), struct(col("journal"), col("uuid")).as("origin"))

    val batch = "sink/out/copies-batch/part-000"
    val stream = "sink/out/copies-stream/part-000"
    Journals.create(client, Journals.spec(batch), Journals.spec(stream))
    copies(spark.read.format("gazette").option("broker", cluster.broker).option("selector", "prefix=sink/copy-in/")
        .load()).write.format("gazette").option("broker", cluster.broker).option("journal", batch).mode("append").save()
    val query = copies(spark.readStream.format("gazette").option("broker", cluster.broker)
        .option("selector", "prefix=sink/copy-in/").option("startingOffsets", "earliest")
        .option("maxBytesPerTrigger", "8000").load())
      .writeStream.format("gazette").option("broker", cluster.broker).option("journal", stream)
      .option("checkpointLocation", Files.createTempDirectory("gazette-ckpt").toString)
      .trigger(Trigger.AvailableNow()).start()
    assert(query.awaitTermination(600000), "the query did not end within 10 minutes")
    assert(query.recentProgress.count(_.numInputRows > 0) > 1, "the stream copied in one batch")

    for (out <- Seq(batch, stream)) {
      val written = Judge.read(cluster.broker, out)
      val copied = written.map(withoutUuid).sorted
      assert(copied == expected,
        s"$out: of ${expected.size}, missing ${expected.diff(copied).take(2)}, " +
          s"unexpected ${copied.diff(expected).take(2)}")
      val uuids = written.map(_.uuid)
      assert(uuids.forall(_.nonEmpty) && uuids.distinct.size == uuids.size, s"$out: UUIDs missing or repeated")
      assert(uuids.toSet.intersect(committed.map(_.uuid).toSet).isEmpty, s"$out: an input's UUID was kept")
    }
  }

  test("protobuf-fixed journals: each row's message framed once, with its UUID, as Gazette's reader reads them") {
    val journal = "sink/out/protobuf/part-000"
    Journals.create(client, Journals.spec(journal, labels = Seq("content-type" -> "application/x-protobuf-fixed")))
    // Field 2, a string: "row-<id>" (shorter than 128 bytes, so its length is one byte).
    spark.range(0, 200, 1, 3).selectExpr("concat('row-', id) AS s")
      .selectExpr("concat(unhex('12'), unhex(lpad(hex(length(s)), 2, '0')), cast(s AS binary)) AS value")
      .write.format("gazette").option("broker", cluster.broker).option("journal", journal)
      .option("checkpointLocation", Files.createTempDirectory("gazette-ckpt").toString).mode("append").save()
    val records = Judge.read(cluster.broker, journal)
    assert(records.forall(_.uuid.nonEmpty), "a message without its UUID")
    val ids = records.map { r =>
      val bytes = r.payload.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray
      """row-(\d+)""".r.findFirstMatchIn(new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1)).get.group(1)
        .toLong
    }
    assert(ids.sorted == (0L until 200L), s"${ids.size} rows, ${ids.size - ids.distinct.size} repeated")
  }

  test("batch writes that share a checkpointLocation each write their own rows, staged there and deleted") {
    val journal = "sink/out/batch-reuse/part-000"
    Journals.create(client, Journals.spec(journal))
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    batchWrite(journal, 0, checkpoint)
    batchWrite(journal, 10, checkpoint, Map("readerRingSize" -> "4"))
    assert(committedNumbers(journal).sorted == (0L until 20L))
    assert(stagedMessages(s"name=$journal").size == 10, "the second write staged nothing")
    val staging = java.nio.file.Paths.get(checkpoint, "gazette-sink", "staging", "writes")
    assert(Files.list(staging).count() == 0, s"left behind: ${stagedFiles(staging)}")
  }

  test("a batch job run again with its batchId writes nothing twice, also after a driver failure") {
    val journal = "sink/out/batch-id/part-000"
    Journals.create(client, Journals.spec(journal))
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    batchWrite(journal, 0, checkpoint, Map("batchId" -> "day-1"))
    batchWrite(journal, 0, checkpoint, Map("batchId" -> "day-1")) // a re-run of a job that succeeded
    batchWrite(journal, 10, checkpoint, Map("batchId" -> "day-2"))
    val e = intercept[Exception](batchWrite(journal, 20, checkpoint,
        Map("batchId" -> "day-3", "test.sinkFault" -> "driver-after-persist:0")))
    assert(e.getMessage.contains("injected driver failure at driver-after-persist"))
    batchWrite(journal, 20, checkpoint, Map("batchId" -> "day-3"))
    assert(committedNumbers(journal).sorted == (0L until 30L))
  }

  test("a batch job that staged its runs and failed after appending them is re-run without appending them twice") {
    val journal = "sink/out/batch-staged/part-000"
    Journals.create(client, Journals.spec(journal))
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    val staged = Map("batchId" -> "day-1", "readerRingSize" -> "4")
    val e =
      intercept[Exception](batchWrite(journal, 0, checkpoint, staged + ("test.sinkFault" -> "driver-after-publish:0")))
    assert(e.getMessage.contains("injected driver failure at driver-after-publish"))
    batchWrite(journal, 0, checkpoint, staged)
    batchWrite(journal, 0, checkpoint, staged)
    batchWrite(journal, 10, checkpoint, staged + ("batchId" -> "day-2"))
    assert(committedNumbers(journal).sorted == (0L until 20L))
    val outside = stagedMessages(s"name=$journal")
    assert(outside.size == 20 && outside.distinct.size == 20, s"${outside.size} staged messages appended")
    assert(!Files.exists(java.nio.file.Paths.get(checkpoint, "gazette-sink", "staging", "batches", "day-1")))
  }

  test("each task's messages form one contiguous run in each journal, also when they spill to local disk") {
    val journal = "sink/out/runs/part-000"
    Journals.create(client, Journals.spec(journal))
    spark.range(0, 4000, 1, 8).selectExpr("to_json(named_struct('n', id, 'pad', repeat('x', 200))) AS value")
      .write.format("gazette").option("broker", cluster.broker).option("journal", journal).option("flushBytes", "10000")
      .mode("append").save()
    assert(committedNumbers(journal).sorted == (0L until 4000L))
    val producers =
      Judge.read(cluster.broker, journal, committed = false).filter(_.flags == 1).map(_.uuid.takeRight(12))
    val runs = producers.foldLeft(List.empty[String])((acc, p) => if (acc.headOption.contains(p)) acc else p :: acc)
    assert(runs.size == 8 && runs.distinct.size == 8, s"${runs.size} runs of ${runs.distinct.size} producers")
  }

  test("an epoch recorded before a crash completes after one of its journals was deleted") {
    val out = outputs("deleted")
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    val e = intercept[Exception](run(out, checkpoint, Map("test.sinkFault" -> "driver-after-persist:1")))
    assert(e.getMessage.contains("injected driver failure at driver-after-persist of epoch 1"))
    // Whatever reached the journal about to go is lost with it, acknowledged or not.
    val deleted = "sink/out/deleted/part-002"
    val lost = Judge.read(cluster.broker, deleted, committed = false).filter(_.flags != 2).map { r =>
      (""""src":"([^"]+)"""".r.findFirstMatchIn(r.payload).get.group(1),
        """"begin":(\d+)""".r.findFirstMatchIn(r.payload).get.group(1).toLong)
    }.toSet
    client.apply(Seq(io.sparkgazette.client.protocol.ApplyRequest.Change(expectModRevision = -1, delete = deleted)))
    run(out, checkpoint)
    val seen = committedOutput(out)
    assert(seen.size == seen.distinct.size, s"${seen.size - seen.distinct.size} rows are visible twice")
    assert(seen.toSet == expected -- lost)
  }

  test("journals the sink cannot write are refused once, by the driver, naming them, and only when rows go there") {
    val good = "sink/out/badtype/part-000"
    val bad = "sink/out/badtype/part-001"
    Journals.create(
      client, Journals.spec(good), Journals.spec(bad, labels = Seq("content-type" -> "application/octet-stream")))
    def write(journalColumn: String) =
      spark.range(0, 20, 1, 4).selectExpr("to_json(named_struct('n', id)) AS value", s"$journalColumn AS journal")
        .write.format("gazette").option("broker", cluster.broker).option("selector", "prefix=sink/out/badtype/").mode(
          "append").save()
    write(s"'$good'")
    assert(committedNumbers(good).sorted == (0L until 20L))
    val e = intercept[Exception](write(s"if(id % 2 = 0, '$good', '$bad')"))
    val message = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
    assert(message.contains(
        s"Journal $bad cannot be written (10 rows): unrecognized content-type (application/octet-stream)"), message)
    assert(!message.contains("Lost task") && !message.contains("stage failure"), message)
    assert(committedNumbers(good).sorted == (0L until 20L))
  }

  test("CSV journals: every record as wide as the journal's first, or an error naming the row") {
    val journal = "sink/out/csv/part-000"
    Journals.create(client, Journals.spec(journal, labels = Seq("content-type" -> "text/csv")))
    def write(values: String*) = {
      val session = spark
      import session.implicits._
      values.toSeq.toDF("value").coalesce(1).write.format("gazette").option("broker", cluster.broker).option(
        "journal", journal)
        .mode("append").save()
    }
    write("a,b", "c,d")
    def error(values: String*) = Iterator.iterate[Throwable](intercept[Exception](write(values: _*)))(_.getCause)
      .takeWhile(_ != null).map(_.getMessage).mkString("\n")
    assert(
      error("e,f,g").contains(s"Row 0 of partition 0 has 3 CSV fields, but the records of journal $journal have 2"))
    assert(error("h,i", "j").contains(
        s"Row 1 of partition 0 has 1 CSV fields, but the records of journal $journal have 2"))
    assert(Judge.read(cluster.broker, journal).map(_.payload.stripSuffix("\n")) == Seq("a,b", "c,d"))
  }

  test("continuous processing is refused with a clear message") {
    val e = intercept[Exception](spark.readStream.format("rate").load().selectExpr("cast(value AS string) AS value")
        .writeStream.format("gazette").option("broker", cluster.broker).option("journal", "sink/in/part-000")
        .option("checkpointLocation", Files.createTempDirectory("gazette-ckpt").toString)
        .trigger(Trigger.Continuous("1 second")).start().awaitTermination(60000))
    assert(e.getMessage.contains("continuous"), e.getMessage)
    assert(e.getMessage.contains("Trigger.Continuous"), e.getMessage)
  }

  test("update mode appends each batch's updated rows") {
    val out = outputs("update")
    // Several batches, so that a source's count is updated more than once.
    val bytes = client.list("prefix=sink/in/").map(j => client.writeHead(j.getSpec.name)).sum
    val q = spark.readStream.format("gazette").option("broker", cluster.broker).option("selector", "prefix=sink/in/")
      .option("startingOffsets", "earliest").option("maxBytesPerTrigger", (bytes / 4).toString).load()
      .groupBy(col("journal").as("src")).count()
      .writeStream.format("gazette").outputMode("update").option("broker", cluster.broker).option("selector", out)
      .option("checkpointLocation", Files.createTempDirectory("gazette-ckpt").toString)
      .trigger(Trigger.AvailableNow()).start()
    assert(q.awaitTermination(600000), "the query did not end within 10 minutes")
    val updates = client.list(out).map(_.getSpec.name).flatMap(j => Judge.read(cluster.broker, j)).map { r =>
      """"src":"([^"]+)"""".r.findFirstMatchIn(r.payload).get.group(1) ->
        """"count":(\d+)""".r.findFirstMatchIn(r.payload).get.group(1).toLong
    }
    // Every update once (a row visible twice is a duplicate, whatever its values), the largest of
    // each source the final count (rows without a key spread over the journals, out of order).
    assert(updates.size == updates.distinct.size, s"updates visible twice: ${updates.diff(updates.distinct)}")
    assert(updates.groupBy(_._1).values.exists(_.size > 1), s"no source was updated twice: $updates")
    assert(q.recentProgress.count(_.numInputRows > 0) >= 3, "fewer than three batches read rows")
    assert(updates.groupBy(_._1).map { case (src, us) => src -> us.map(_._2).max } ==
      expected.groupBy(_._1).map { case (j, rows) => j -> rows.size.toLong })
  }

  test("complete mode and a missing checkpointLocation are refused with clear messages") {
    val stream =
      spark.readStream.format("gazette").option("broker", cluster.broker).option("selector", "prefix=sink/in/").load()
    // Spark itself refuses a query without any checkpoint location; with only the session-wide
    // default set, the sink cannot see it and says so.
    spark.conf.set("spark.sql.streaming.checkpointLocation", Files.createTempDirectory("c").toString)
    val noCheckpoint =
      try intercept[Exception](stream.select(col("value")).writeStream.format("gazette")
            .option("broker", cluster.broker).option("journal", "sink/in/part-000").start().processAllAvailable())
      finally spark.conf.unset("spark.sql.streaming.checkpointLocation")
    assert(noCheckpoint.getMessage.contains("'checkpointLocation' is required") &&
      noCheckpoint.getMessage.contains("session-wide default"))
    val complete = intercept[Exception](stream.groupBy("journal").count().select(col("journal").as("value"))
        .writeStream.format("gazette").outputMode("complete").option("broker", cluster.broker)
        .option("journal", "sink/in/part-000").option(
          "checkpointLocation", Files.createTempDirectory("c").toString).start()
        .processAllAvailable())
    assert(complete.getMessage.contains("append-only"))
    val extra =
      intercept[Exception](spark.range(3).selectExpr("cast(id as string) as value", "id").write.format("gazette")
          .option("broker", cluster.broker).option("journal", "sink/in/part-000").mode("append").save())
    assert(extra.getMessage.contains("Column 'id' cannot be written"))
  }
}

object SinkIntegrationSuite {
  // Executor code in local mode shares the JVM: a flag tasks see once.
  val recreateOnce = new java.util.concurrent.atomic.AtomicBoolean(false)
}
