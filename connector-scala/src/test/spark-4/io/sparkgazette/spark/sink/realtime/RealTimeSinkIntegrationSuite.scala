package io.sparkgazette.spark
package sink
package realtime

import java.nio.file.Files

import io.sparkgazette.spark.hadoop.SerializableConfiguration
import io.sparkgazette.spark.sink.config.{SinkColumns, SinkOptions}
import io.sparkgazette.spark.sink.metrics.SinkMetrics
import io.sparkgazette.testing.{Journals, Judge, RealTimeClusterSuite}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.functions.{array, col, concat, explode, lit, struct, to_json}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.apache.spark.sql.types.StructType
import org.scalatest.funsuite.AnyFunSuite

/** Gazette → Spark → Gazette in real-time mode (`Trigger.RealTime`), judged by Gazette's own
  * ReadCommittedIter on the output journals: each row visible while its batch still runs, and
  * every row exactly once although a batch stopped mid-way runs again from its start.
  */
class RealTimeSinkIntegrationSuite extends AnyFunSuite with RealTimeClusterSuite {
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

  /** Every expected row read once, and nothing else. */
  private def assertEachOnce(rows: Seq[(String, Long, Int)], expected: Seq[(String, Long, Int)]): Unit = {
    if (rows.size != rows.distinct.size) fail(s"rows visible twice: ${rows.diff(rows.distinct).take(5)}")
    assert(rows.sorted == expected.sorted)
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

  // Producer 0 of the script: m0 committed by ACK a0; m1 left open and rolled back by a0 again; m2
  // committed by ACK a1.
  private def committedThenRolledBack(w: io.sparkgazette.testing.JudgeScript) =
    w.continue(0).ack(0).continue(0).rollback(0, 0).continue(0).ack(0)

  // a0 appended again, below the last ACK (an upstream producer restored an older checkpoint):
  // Gazette's readers go back to it, so m1 and m2 re-sent, then m3, are committed by the next
  // ACK, m1 and m2 at clocks below m2's: m1 for the first time, m2 for the second (at another
  // offset).
  private def backToAnOlderAck(w: io.sparkgazette.testing.JudgeScript) =
    w.rollback(0, 0).dup(0, 1).dup(0, 2).continue(0).ack(0)

  /** `input` written by both scripts above, and an empty `output`. */
  private def rolledBackToAnOlderAck(input: String, output: String): Unit = {
    Journals.create(client, Journals.spec(input), Journals.spec(output))
    val w = Judge.script(cluster.broker, input)
    try backToAnOlderAck(committedThenRolledBack(w)).sync()
    finally w.close()
  }

  test("messages committed after a rollback to an older ACK, their clocks gone back, are written in a later batch") {
    val input = "sink/rt-back-in/part-000"
    val output = "sink/rt-back-out/part-000"
    Journals.create(client, Journals.spec(input), Journals.spec(output))
    val w = Judge.script(cluster.broker, input)
    def expected = Judge.read(cluster.broker, input).flatMap(r => Seq(0, 1).map((r.journal, r.begin, _)))
    try {
      committedThenRolledBack(w).sync()
      val q = start("prefix=sink/rt-back-in/", "prefix=sink/rt-back-out/",
        Files.createTempDirectory("gazette-rt-back").toString, "3 seconds")
      try {
        await("the rows of m0 and m2")(written(Seq(output)).size == expected.size)
        val at = batchesDone(q)
        await("a batch end")(batchesDone(q) > at)
        backToAnOlderAck(w).sync()
        assert(expected.size == 10, expected)
        await("the rows of m1 and m2 committed again")(written(Seq(output)).size >= expected.size)
      } finally q.stop()
      val rows = written(Seq(output))
      assert(rows.sorted == expected.sorted)
    } finally w.close()
  }

  test("messages committed after a rollback to an older ACK are written once when their batch runs again") {
    val input = "sink/rt-back-rerun-in/part-000"
    val output = "sink/rt-back-rerun-out/part-000"
    rolledBackToAnOlderAck(input, output)
    val expected = Judge.read(cluster.broker, input).flatMap(r => Seq(0, 1).map((r.journal, r.begin, _)))
    assert(expected.size == 10, expected)
    val checkpoint = Files.createTempDirectory("gazette-rt-back-rerun").toString
    // The first batch is stopped before it ends: the second run writes its rows again.
    val first = start("prefix=sink/rt-back-rerun-in/", "prefix=sink/rt-back-rerun-out/", checkpoint, "60 seconds")
    try await("the first run's rows")(written(Seq(output)).size >= expected.size)
    finally first.stop()
    val second = start("prefix=sink/rt-back-rerun-in/", "prefix=sink/rt-back-rerun-out/", checkpoint, "2 seconds")
    try await("a batch end after the restart")(batchesDone(second) >= 1)
    finally second.stop()
    assertEachOnce(written(Seq(output)), expected)
    assert(written(Seq(output), committed = false).size > expected.size, "no row was written again")
  }

  test("a query that holds rows back loses none of the rows of messages committed after a rollback") {
    val input = "sink/rt-held-in/part-000"
    val output = "sink/rt-held-out/part-000"
    rolledBackToAnOlderAck(input, output)
    val expected = Judge.read(cluster.broker, input).map(r => (r.journal, r.begin, 0))
    // Rows go on in fours: the source reads ahead of the rows the sink is given.
    assertEachOnceThrough(input, output, expected, _.grouped(4).flatten)
  }

  test("a query that puts rows out of their messages' order loses none of them") {
    val input = "sink/rt-reorder-in/part-000"
    val output = "sink/rt-reorder-out/part-000"
    Journals.create(client, Journals.spec(input), Journals.spec(output))
    val w = Judge.script(cluster.broker, input)
    try { (0 until 30).foreach(_ => w.commit(0)); w.sync() }
    finally w.close()
    val expected = Judge.read(cluster.broker, input).map(r => (r.journal, r.begin, 0))
    // One producer's messages, each three rows in reverse.
    assertEachOnceThrough(input, output, expected, _.grouped(3).flatMap(_.reverse))
  }

  /** Runs `input` to `output` through a `mapPartitions` of `rows` until every row is written, and
    * asserts that readers read each of `expected` once.
    */
  private def assertEachOnceThrough(input: String, output: String, expected: Seq[(String, Long, Int)],
      rows: Iterator[org.apache.spark.sql.Row] => Iterator[org.apache.spark.sql.Row]): Unit = {
    val q = plain(
      input,
      s"name=$output",
      Files.createTempDirectory("gazette-rt-operator").toString,
      "3 seconds",
      df => df.mapPartitions(rows)(org.apache.spark.sql.Encoders.row(df.schema))
    )
    try await("every row")(written(Seq(output), committed = false).size >= expected.size)
    finally q.stop()
    assertEachOnce(written(Seq(output)), expected)
  }

  test("rows held back past the messages a task holds, of messages committed twice, are none of them dropped") {
    val input = "sink/rt-passed-in/part-000"
    val output = "sink/rt-passed-out/part-000"
    rolledBackToAnOlderAck(input, output)
    // Committed: m0, m2, then m1, m2 again and m3. The task holds three: the rows, held back until
    // all five are emitted, find m2's second copy but not its first.
    val expected = Judge.read(cluster.broker, input).map(r => (r.journal, r.begin, 0))
    assert(expected.size == 5, expected)
    sys.props(handoff.SequencedMessages.TestCapacity) = "3"
    try {
      val q = plain(
        input,
        s"name=$output",
        Files.createTempDirectory("gazette-rt-passed").toString,
        "3 seconds",
        df => df.mapPartitions(_.grouped(5).flatten)(org.apache.spark.sql.Encoders.row(df.schema))
      )
      try await("every row")(written(Seq(output), committed = false).size >= expected.size)
      finally q.stop()
    } finally sys.props -= handoff.SequencedMessages.TestCapacity
    assertEachOnce(written(Seq(output)), expected)
  }

  test("rows a failed run wrote past where its rerun ends keep their UUIDs in the batch after, rollbacks or not") {
    val input = "sink/rt-past-in/part-000"
    val output = "sink/rt-past-out/part-000"
    Journals.create(client, Journals.spec(input), Journals.spec(output))
    val w = Judge.script(cluster.broker, input)
    try {
      // Producer 0 commits m0, m1, m2, each with its ACK; producer 1 then 1,500 messages; then
      // producer 0 goes back to its first ACK, and m1 re-sent is committed by its third ACK
      // appended again: m1's second row, at a clock below m2's, is producer 0's last.
      (0 until 3).foreach(_ => w.continue(0).ack(0))
      (0 until 1500).foreach(_ => w.commit(1))
      w.rollback(0, 0).dup(0, 1).rollback(0, 2).sync()
    } finally w.close()
    val read = Judge.read(cluster.broker, input)
    val expected = read.map(r => (r.journal, r.begin, 0))
    val slow = org.apache.spark.sql.functions.udf((b: Long) => { Thread.sleep(4); b })
    val checkpoint = Files.createTempDirectory("gazette-rt-past").toString
    // The first run writes every row in its one batch, which is stopped before it ends; the second
    // runs it again, slowly, in batches too short to reach the end of the input in one.
    val first = plain(input, s"name=$output", checkpoint, "10 minutes")
    try await("the first run's rows")(written(Seq(output)).size >= expected.size)
    finally first.stop()
    val second = plain(input, s"name=$output", checkpoint, "1 second", _.withColumn("begin", slow(col("begin"))))
    try await("the second run's rows", 120000)(
        Judge.read(cluster.broker, output, committed = false).size >= 2 * expected.size)
    finally second.stop()
    val firstEnd =
      second.recentProgress.find(_.batchId == 0).map(p =>
        source.offsets.JournalOffsets.fromJson(p.sources.head.endOffset))
    assert(firstEnd.exists(_(input) < read.last.end), s"the rerun's first batch read the whole input: $firstEnd")
    assertEachOnce(written(Seq(output)), expected)
  }

  test("the batch after a rerun places the rows the failed run wrote past the rerun's end as that run did") {
    val input = "sink/rt-grown-in/part-000"
    val outputs = Seq("sink/rt-grown-out/part-000", "sink/rt-grown-out/part-001")
    val added = "sink/rt-grown-out/part-002"
    Journals.create(client, (input +: outputs).map(Journals.spec(_)): _*)
    Judge.publishEvents(cluster.broker, input, 600)
    val read = Judge.read(cluster.broker, input)
    val expected = read.map(r => (r.journal, r.begin, 0))
    // The first 40 rows take 10 s: the rerun's batch (8 s) ends among them, the batch after it
    // reads the rest.
    val cut = read(40).begin
    val slow = org.apache.spark.sql.functions.udf((b: Long) => { if (b < cut) Thread.sleep(250); b })
    val checkpoint = Files.createTempDirectory("gazette-rt-grown").toString
    // The first run writes every row over two journals in its one batch, stopped before it ends;
    // then the selector matches a third; the second run's rerun of that batch ends early, and the
    // batch after it writes the rest again.
    val first = plain(input, "prefix=sink/rt-grown-out/", checkpoint, "10 minutes")
    try await("the first run's rows")(written(outputs).size >= expected.size)
    finally first.stop()
    Journals.create(client, Journals.spec(added))
    val all = outputs :+ added
    val second =
      plain(input, "prefix=sink/rt-grown-out/", checkpoint, "8 seconds", _.withColumn("begin", slow(col("begin"))))
    try await("the second run's rows", 120000)(
        all.map(j => Judge.read(cluster.broker, j, committed = false).size).sum >= 2 * expected.size)
    finally second.stop()
    val firstEnd =
      second.recentProgress.find(_.batchId == 0).map(p =>
        source.offsets.JournalOffsets.fromJson(p.sources.head.endOffset))
    assert(firstEnd.exists(_(input) < read.last.end), s"the rerun's first batch read the whole input: $firstEnd")
    assertEachOnce(written(all), expected)
  }

  test("documents copied in real-time mode carry the sink's UUIDs in place of their own, each once") {
    val input = "sink/rt-copy-in/part-000"
    val output = "sink/rt-copy-out/part-000"
    Journals.create(client, Journals.spec(input), Journals.spec(output))
    Judge.publishScenario(cluster.broker, input, "rollback")
    Judge.publishEvents(cluster.broker, input, 40)
    val inputs = Judge.read(cluster.broker, input)
    val q = spark.readStream.format("gazette").option("broker", cluster.broker).option("selector", s"name=$input")
      .option("startingOffsets", "earliest").option("realTimePartitions", "1").load()
      .select(col("value"), struct(col("journal"), col("uuid")).as("origin"))
      .writeStream.format("gazette").option("broker", cluster.broker).option("journal", output)
      .option("checkpointLocation", Files.createTempDirectory("gazette-rt-copy").toString).outputMode("update")
      .trigger(Trigger.RealTime("3 seconds")).start()
    try await("the copies")(Judge.read(cluster.broker, output).size >= inputs.size)
    finally q.stop()
    val outputs = Judge.read(cluster.broker, output)
    // The documents, their UUIDs left out: what each output holds at /_meta/uuid is its own UUID.
    def document(payload: String): (String, String) = {
      val doc = com.google.gson.JsonParser.parseString(payload).getAsJsonObject
      val meta = doc.getAsJsonObject("_meta")
      val uuid = meta.remove("uuid").getAsString
      (doc.toString, uuid)
    }
    assert(outputs.map(o => document(o.payload)._1).sorted == inputs.map(i => document(i.payload)._1).sorted)
    assert(outputs.forall(o => document(o.payload)._2 == o.uuid))
    assert(outputs.map(_.uuid).toSet.intersect(inputs.map(_.uuid).toSet).isEmpty)
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

  private def plain(input: String, output: String, checkpoint: String, duration: String,
      shape: org.apache.spark.sql.DataFrame => org.apache.spark.sql.DataFrame = identity): StreamingQuery =
    shape(spark.readStream.format("gazette").option("broker", cluster.broker).option("selector", s"name=$input")
        .option("startingOffsets", "earliest").option("realTimePartitions", "1").load())
      .select(to_json(struct(col("journal"), col("begin"), lit(0).as("k"))).as("value"),
        struct(col("journal"), col("uuid")).as("origin"))
      .writeStream.format("gazette").option("broker", cluster.broker).option("selector", output)
      .option("checkpointLocation", checkpoint).outputMode("update").trigger(Trigger.RealTime(duration)).start()

  // A batch run again: the first run, stopped in its first batch once `firstRun` holds, then
  // `between`, then a run from the checkpoint (at `rerunFrom`, where moved) until a batch ends.
  private def runFirstBatchAgain(input: String, output: String, checkpoint: String, firstRun: => Boolean,
      firstBatch: String = "20 seconds", rerunFrom: Option[String] = None)(between: => Unit): Unit = {
    val first = plain(input, output, checkpoint, firstBatch)
    try await("the first run's rows")(firstRun)
    finally first.stop()
    between
    val second = plain(input, output, rerunFrom.getOrElse(checkpoint), "2 seconds")
    try await("a batch end after the restart")(batchesDone(second) >= 1)
    finally second.stop()
  }

  test("rows without a key are placed by their origin: a batch run again puts each where its first run did") {
    val input = "sink/rt-nokey-in/part-000"
    val outputs = Seq("sink/rt-nokey-out/part-000", "sink/rt-nokey-out/part-001")
    Journals.create(client, (input +: outputs).map(Journals.spec(_)): _*)
    Judge.publishEvents(cluster.broker, input, 300)
    val expected = Judge.read(cluster.broker, input).map(r => (r.journal, r.begin, 0))
    val checkpoint = Files.createTempDirectory("gazette-rt-nokey").toString
    runFirstBatchAgain(input, "prefix=sink/rt-nokey-out/", checkpoint, written(outputs).size >= expected.size)(())
    assert(outputs.forall(j => Judge.read(cluster.broker, j).nonEmpty), "rows were not spread")
    assertEachOnce(written(outputs), expected)
  }

  test("a shuffle between the source and an exactly-once real-time write is refused, naming the origin journal") {
    val input = "sink/rt-shuffle-in/part-000"
    val output = "sink/rt-shuffle-out/part-000"
    Journals.create(client, Journals.spec(input), Journals.spec(output))
    Judge.publishEvents(cluster.broker, input, 50)
    val q = plain(input, s"name=$output", Files.createTempDirectory("gazette-rt-shuffle").toString, "3 seconds",
      _.repartition(2, col("begin")))
    val e = intercept[Exception](q.awaitTermination(120000))
    assert(e.getMessage.contains("GAZETTE_SINK_INVALID_ROW") && e.getMessage.contains(input) &&
        e.getMessage.contains("no Gazette source reads"), e.getMessage)
  }

  test("a micro-batch epoch the sink committed but Spark did not is completed, and written again in real-time mode") {
    val input = "sink/rt-switch-in/part-000"
    val output = "sink/rt-switch-out/part-000"
    Journals.create(client, Journals.spec(input), Journals.spec(output))
    Judge.publishEvents(cluster.broker, input, 50)
    val checkpoint = Files.createTempDirectory("gazette-rt-switch").toString
    def rows = spark.readStream.format("gazette").option("broker", cluster.broker).option("selector", s"name=$input")
      .option("startingOffsets", "earliest").load()
      .select(to_json(struct(col("journal"), col("begin"), lit(0).as("k"))).as("value"),
        struct(col("journal"), col("uuid")).as("origin"))
      .writeStream.format("gazette").option("broker", cluster.broker).option("journal", output)
      .option("checkpointLocation", checkpoint).outputMode("update")
    val micro = rows.option("test.sinkFault", "driver-after-persist:0").trigger(Trigger.ProcessingTime(0)).start()
    intercept[Exception](micro.awaitTermination(120000))
    assert(written(Seq(output)).isEmpty)
    // Spark drops the batch's micro-batch offsets to run it again in real-time mode, to another end.
    Judge.publishEvents(cluster.broker, input, 20, seed = 2L)
    val expected = Judge.read(cluster.broker, input).map(r => (r.journal, r.begin, 0))
    val q = rows.trigger(Trigger.RealTime("2 seconds")).start()
    try await("every row")(expected.diff(written(Seq(output))).isEmpty)
    finally q.stop()
    // The epoch's ACKs were appended, and its range written again: at least once, none lost.
    assert(written(Seq(output)).size > expected.size)
  }

  test("a union of two sources reading one journal writes the rows of both") {
    val input = "sink/rt-union-in/part-000"
    val output = "sink/rt-union-out/part-000"
    Journals.create(client, Journals.spec(input), Journals.spec(output))
    Judge.publishEvents(cluster.broker, input, 30)
    val expected = Judge.read(cluster.broker, input).flatMap(r => Seq((r.journal, r.begin, 0), (r.journal, r.begin, 1)))
    def branch(k: Int) = spark.readStream.format("gazette").option("broker", cluster.broker)
      .option("selector", s"name=$input").option("startingOffsets", "earliest").option("realTimePartitions", "1")
      .load().select(to_json(struct(col("journal"), col("begin"), lit(k).as("k"))).as("value"),
        struct(col("journal"), col("uuid")).as("origin"))
    val q = branch(0).union(branch(1)).writeStream.format("gazette").option("broker", cluster.broker)
      .option("journal", output).option("checkpointLocation", Files.createTempDirectory("gazette-rt-union").toString)
      .outputMode("update").trigger(Trigger.RealTime("3 seconds")).start()
    try await("the rows of both sources")(written(Seq(output)).size >= expected.size)
    finally q.stop()
    assert(written(Seq(output)).sorted == expected.sorted)
  }

  test("a union of one loaded stream with itself is refused when the query starts, before it writes anything") {
    val input = "sink/rt-self-in/part-000"
    val output = "sink/rt-self-out/part-000"
    Journals.create(client, Journals.spec(input), Journals.spec(output))
    Judge.publishEvents(cluster.broker, input, 30)
    val loaded = spark.readStream.format("gazette").option("broker", cluster.broker)
      .option("selector", s"name=$input").option("startingOffsets", "earliest").option("realTimePartitions", "1")
      .load()
    def branch(k: Int) = loaded.select(to_json(struct(col("journal"), col("begin"), lit(k).as("k"))).as("value"),
      struct(col("journal"), col("uuid")).as("origin"))
    // Both branches would share the one source, and so their rows' UUIDs: Spark refuses them.
    Seq(branch(0).union(branch(0)), branch(0).union(branch(1))).foreach { unioned =>
      val q = unioned.writeStream.format("gazette").option("broker", cluster.broker).option("journal", output)
        .option("checkpointLocation", Files.createTempDirectory("gazette-rt-self").toString).outputMode("update")
        .trigger(Trigger.RealTime("3 seconds")).start()
      val e = intercept[Exception](q.awaitTermination(120000))
      assert(e.getMessage.contains("IDENTICAL_SOURCES_IN_UNION_NOT_SUPPORTED") && e.getMessage.contains(input),
        e.getMessage)
    }
    assert(Judge.read(cluster.broker, output, committed = false).isEmpty)
  }

  test("a batch run again from its checkpoint moved elsewhere writes each row once") {
    val input = "sink/rt-moved-in/part-000"
    val output = "sink/rt-moved-out/part-000"
    Journals.create(client, Journals.spec(input), Journals.spec(output))
    Judge.publishEvents(cluster.broker, input, 50)
    val expected = Judge.read(cluster.broker, input).map(r => (r.journal, r.begin, 0))
    val parent = Files.createTempDirectory("gazette-rt-moved")
    val (before, after) = (parent.resolve("before"), parent.resolve("after"))
    runFirstBatchAgain(input, s"name=$output", before.toString, written(Seq(output)).size >= expected.size,
      firstBatch = "60 seconds", rerunFrom = Some(after.toString))(Files.move(before, after))
    assert(written(Seq(output), committed = false).size > expected.size, "no row was written again")
    assertEachOnce(written(Seq(output)), expected)
  }

  test("a batch run again after one of its journals was deleted maps its rows over the others") {
    val input = "sink/rt-del-in/part-000"
    val outputs = Seq("sink/rt-del-out/part-000", "sink/rt-del-out/part-001")
    Journals.create(client, (input +: outputs).map(Journals.spec(_)): _*)
    Judge.publishEvents(cluster.broker, input, 100)
    val checkpoint = Files.createTempDirectory("gazette-rt-del").toString
    runFirstBatchAgain(input, "prefix=sink/rt-del-out/", checkpoint, written(outputs).size >= 90) {
      client.apply(Seq(io.sparkgazette.client.protocol.ApplyRequest.Change(expectModRevision = -1,
            delete = outputs(1))))
      await("the journal gone")(client.list(s"name=${outputs(1)}").isEmpty)
    }
  }

  test("a batch run again after one of its journals was relabelled places its rows as its first run did") {
    val input = "sink/rt-relabel-in/part-000"
    val outputs = Seq("sink/rt-relabel-out/part-000", "sink/rt-relabel-out/part-001")
    val ndjson = "content-type" -> "application/x-ndjson"
    Journals.create(
      client, Journals.spec(input) +: outputs.map(Journals.spec(_, Seq(ndjson, "app" -> "rt-relabel"))): _*)
    Judge.publishEvents(cluster.broker, input, 300)
    val expected = Judge.read(cluster.broker, input).map(r => (r.journal, r.begin, 0))
    val checkpoint = Files.createTempDirectory("gazette-rt-relabel").toString
    // The first run writes every row over both journals in its batch; relabelled, not deleted,
    // the selector then matches one journal only.
    runFirstBatchAgain(input, "app=rt-relabel", checkpoint, written(outputs).size >= expected.size) {
      Journals.create(client, Journals.spec(outputs(1), Seq(ndjson, "app" -> "elsewhere")))
      await("the journal relabelled")(client.list("app=rt-relabel").size == 1)
    }
    assert(written(outputs, committed = false).size > expected.size, "no row was written again")
    assertEachOnce(written(outputs), expected)
  }

  test("attempts of a real-time task writing at once (a zombie, a rerun, a retry) drop none of each other's rows") {
    val output = "sink/rt-own-out/part-000"
    Journals.create(client, Journals.spec(output))
    val options = SinkOptions.parse(
      Map(
        "broker" -> cluster.broker,
        "journal" -> output,
        "deliveryGuarantee" -> "at-least-once",
        "checkpointLocation" -> Files.createTempDirectory("gazette-rt-own").toString
      ),
      streaming = true
    )
    val driver = new SinkDriver(options, SinkColumns(new StructType().add("value", "binary")),
      new SerializableConfiguration(spark.sessionState.newHadoopConf()), streaming = true)
    val targets = driver.targets()
    val n = 2000
    // A zombie of a failed run, and of the run after it the task's first attempt and Spark's retry.
    def attempt(tag: String, run: Long, number: Int) = new Thread(() => {
      val w = new realtime.RealTimeDataWriter(driver.config, targets, partitionId = 0, epoch = 7L, seed = 42L,
        intents.SinkProducers(42L ^ run, Map.empty), clockFloor = 0L, stageAttempt = 0, attempt = number)
      try {
        (1 to n).foreach(i => w.write(InternalRow(s"""{"r":"$tag-$i"}""".getBytes("UTF-8"))))
        w.commit()
      } finally w.close()
    })
    val attempts = Seq(attempt("a", 1L, 0), attempt("b", 2L, 0), attempt("c", 2L, 1))
    attempts.foreach(_.start())
    attempts.foreach(_.join())
    val rows = Judge.read(cluster.broker, output).map(_.payload)
    assert(Seq("a", "b", "c").map(t => rows.count(_.contains(s"\"$t-"))) == Seq(n, n, n))
  }

  test("each real-time batch's progress counts the rows and bytes its tasks appended, as Gazette's reader sees them") {
    val (input, output) = ("sink/rt-metrics-in/part-000", "sink/rt-metrics-out/part-000")
    Journals.create(client, Seq(input, output).map(Journals.spec(_)): _*)
    Judge.publishRandom(cluster.broker, input, 73L)
    val rows = Judge.read(cluster.broker, input).size * 2
    val q = start(s"name=$input", s"name=$output", Files.createTempDirectory("gazette-rt-metrics").toString,
      "3 seconds")
    try {
      await("the rows")(written(Seq(output)).size == rows)
      // The batch that wrote them reports at its end.
      val at = batchesDone(q)
      await("the batch's end")(batchesDone(q) > at)
    } finally q.stop()
    def progressed(metric: String) =
      q.recentProgress.toSeq.map(p => Option(p.sink.metrics.get(metric)).fold(0L)(_.toLong)).sum
    assert(progressed(SinkMetrics.RowsWritten) == rows)
    assert(progressed(SinkMetrics.BytesAppended) == client.writeHead(output))
    assert(progressed(SinkMetrics.Appends) > 0)
    assert(progressed(SinkMetrics.AckIntentsWritten) == 0)
  }

  test("writes that are not real-time write a column named origin as any other") {
    val output = "sink/json-origin-out/part-000"
    Journals.create(client, Journals.spec(output))
    spark.sql("SELECT 'a' AS id, 'j1' AS oj, 'u1' AS ou")
      .select(col("id"), struct(col("oj").as("journal"), col("ou").as("uuid")).as("origin"))
      .write.format("gazette").option("broker", cluster.broker).option("journal", output).mode("append").save()
    val payloads = Judge.read(cluster.broker, output).map(_.payload)
    assert(payloads.size == 1 && payloads.forall(_.contains("\"origin\":{\"journal\":\"j1\"")), payloads)
  }
}
