package io.sparkgazette.spark
package source

import java.nio.file.Files
import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import io.sparkgazette.message.Framing
import io.sparkgazette.spark.source.offsets.JournalTask
import io.sparkgazette.testing.{Journals, Judge, SparkClusterSuite}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

/** The source in a real Spark session against a real broker, judged by Gazette's own
  * ReadCommittedIter: every committed message exactly once, whatever the batch boundaries,
  * across restarts.
  */
class SourceIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  private type Key = (String, Long, Long, String)

  /** Journals under `prefix`, one per framing and seed, written by the judge. */
  private def publish(prefix: String, seeds: Seq[Int]): Map[String, Seq[Key]] = {
    val framings = Seq(Framing.JsonLines, Framing.Csv, Framing.ProtobufFixed)
    val journals = seeds.map(s => (f"$prefix/part-$s%03d", framings(s % 3)))
    Journals.create(client,
      journals.map { case (n, ct) => Journals.spec(n, labels = Seq("content-type" -> ct, "app" -> "source-test")) }: _*)
    journals.map { case (j, _) =>
      Judge.publishRandom(cluster.broker, j, seeds(journals.indexWhere(_._1 == j)).toLong)
      j -> Judge.read(cluster.broker, j).map(r => (r.journal, r.begin, r.end, r.uuid))
    }.toMap
  }

  private def keys(df: DataFrame): Seq[Key] =
    df.select("journal", "begin", "end", "uuid").collect().toSeq.map(r =>
      (r.getString(0), r.getLong(1), r.getLong(2), Option(r.getString(3)).getOrElse("")))

  private def byJournal(rows: Seq[Key]): Map[String, Seq[Key]] = rows.groupBy(_._1).map { case (j, rs) =>
    j -> rs.sortBy(_._2)
  }

  private def assertSame(ours: Seq[Key], expected: Map[String, Seq[Key]]): Unit = {
    val got = byJournal(ours)
    // Rows of a batch come in any order; Gazette's come in commit order. Each message once is
    // what must match.
    for ((j, unsorted) <- expected.toSeq.sortBy(_._1)) {
      val want = unsorted.sortBy(_._2)
      val have = got.getOrElse(j, Nil)
      if (have != want) {
        val i = have.zipAll(want, null, null).indexWhere { case (a, b) => a != b }
        fail(
          s"$j: ${have.size} rows vs Gazette's ${want.size}; first difference at #$i: ours ${have.lift(i)}, Gazette's ${want.lift(i)}")
      }
    }
    assert(got.keySet -- expected.keySet == Set.empty)
  }

  /** Runs a stream until it has nothing left, collecting every batch's rows once per batch id. */
  private def runStream(options: Map[String, String], checkpoint: String, maxBatches: Int = Int.MaxValue,
      into: ConcurrentHashMap[Long, Seq[Key]]): Int = {
    val q = spark.readStream.format("gazette").options(options).load()
      .writeStream.option("checkpointLocation", checkpoint)
      .trigger(Trigger.AvailableNow())
      .foreachBatch { (df: DataFrame, id: Long) => into.put(id, keys(df)); () }
      .start()
    if (maxBatches == Int.MaxValue) assert(q.awaitTermination(600000), "the query did not end within 10 minutes")
    else {
      while (q.isActive && into.size() < maxBatches) Thread.sleep(20)
      q.stop()
    }
    q.recentProgress.length
  }

  test("a stream cut into small batches emits every committed message exactly once, as Gazette reads them") {
    val expected = publish("source/stream", 0 until 6)
    val batches = new ConcurrentHashMap[Long, Seq[Key]]()
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    val options =
      Map("broker" -> cluster.broker, "selector" -> "prefix=source/stream/", "startingOffsets" -> "earliest",
        "maxBytesPerTrigger" -> "3000", "sequencerRingSize" -> "8")
    runStream(options, checkpoint, into = batches)
    val rows = batches.values().asScala.toSeq.flatten
    assert(batches.size() > 5, "small batches were expected")
    assert(rows.distinct.size == rows.size, "a message was emitted twice")
    assertSame(rows, expected)
  }

  test("a stream stopped and restarted from its checkpoint resumes exactly") {
    val expected = publish("source/restart", 10 until 14)
    val batches = new ConcurrentHashMap[Long, Seq[Key]]()
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    val options =
      Map("broker" -> cluster.broker, "selector" -> "prefix=source/restart/", "startingOffsets" -> "earliest",
        "maxBytesPerTrigger" -> "2000")
    runStream(options, checkpoint, maxBatches = 3, into = batches)
    val before = batches.size()
    assert(before >= 3)
    runStream(options, checkpoint, into = batches)
    val rows = batches.values().asScala.toSeq.flatten
    assert(batches.size() > before)
    assert(rows.distinct.size == rows.size, "a message was emitted twice")
    assertSame(rows, expected)
  }

  test("a running stream follows appends and a journal created after it started, each message once") {
    val batches = new ConcurrentHashMap[Long, Seq[Key]]()
    Journals.create(client, Journals.spec("source/live/part-030"), Journals.spec("source/live/part-031"))
    val q = spark.readStream.format("gazette").option("broker", cluster.broker).option(
      "selector", "prefix=source/live/")
      .option("startingOffsets", "earliest").option("maxBytesPerTrigger", "5000").load()
      .writeStream.option("checkpointLocation", Files.createTempDirectory("gazette-ckpt").toString)
      .trigger(Trigger.ProcessingTime(100))
      .foreachBatch { (df: DataFrame, id: Long) => batches.put(id, keys(df)); () }
      .start()
    try {
      Judge.publishRandom(cluster.broker, "source/live/part-030", 30)
      Journals.create(client, Journals.spec("source/live/part-032", labels = Seq("content-type" -> Framing.Csv)))
      Judge.publishRandom(cluster.broker, "source/live/part-031", 31)
      Judge.publishRandom(cluster.broker, "source/live/part-032", 32)
      val expected = Seq(30, 31, 32).map(i => s"source/live/part-0$i")
        .map(j => j -> Judge.read(cluster.broker, j).map(r => (r.journal, r.begin, r.end, r.uuid))).toMap
      val total = expected.values.map(_.size).sum
      val deadline = System.currentTimeMillis() + 60000
      while (batches.values().asScala.map(_.size).sum < total && System.currentTimeMillis() < deadline)
        Thread.sleep(100)
      q.processAllAvailable()
      val rows = batches.values().asScala.toSeq.flatten
      assert(rows.distinct.size == rows.size, "a message was emitted twice")
      assertSame(rows, expected)
    } finally q.stop()
  }

  test("a batch read equals Gazette's read; columns carry producer, clock, publish time and labels") {
    val expected = publish("source/batch", 20 until 23)
    val df = spark.read.format("gazette").option("broker", cluster.broker).option("selector", "prefix=source/batch/")
      .option("includeLabels", "true").load()
    assertSame(keys(df), expected)
    val row = df.where("uuid is not null").select("uuid", "producer", "clock", "publishTime", "labels").head()
    assert(row.getString(1) == row.getString(0).split('-').last)
    assert(row.getLong(2) > 0 && row.getTimestamp(3).getTime > 1.6e12)
    assert(row.getMap[String, scala.collection.Seq[String]](4)("app").toSeq == Seq("source-test"))
  }

  test("a query reads only the columns it selects, and rows of those columns are what a full read has") {
    val expected = publish("source/pruned", 30 until 33)
    val df = spark.read.format("gazette").option("broker", cluster.broker).option("selector", "prefix=source/pruned/")
      .option("includeLabels", "true").load()
    val scanned = df.select("journal", "begin", "end")
    // The scan Spark plans reads exactly these columns: value, labels and the UUID's are never built.
    val schemas = scanned.queryExecution.executedPlan.collect {
      case s: org.apache.spark.sql.execution.datasources.v2.BatchScanExec => s.scan.readSchema().fieldNames.toSeq
    }
    assert(schemas == Seq(Seq("journal", "begin", "end")))
    // Journals' labels travel in the planned tasks only when the query reads them.
    def shipped(
        d: org.apache.spark.sql.DataFrame): Seq[Map[String, Seq[String]]] = d.queryExecution.executedPlan.collect {
      case s: org.apache.spark.sql.execution.datasources.v2.BatchScanExec =>
        s.scan.toBatch.planInputPartitions().toSeq.flatMap(_.asInstanceOf[JournalTask].ranges.map(_.labels))
    }.flatten
    assert(shipped(scanned).nonEmpty && shipped(scanned).forall(_.isEmpty))
    assert(shipped(df).forall(_.get("app").contains(Seq("source-test"))))
    val ours = scanned.collect().map(r => (r.getString(0), r.getLong(1), r.getLong(2))).toSeq
    assert(ours.sorted == expected.values.flatten.map(k => (k._1, k._2, k._3)).toSeq.sorted)
    assert(df.count() == expected.values.map(_.size).sum)
    // Selected out of the schema's order, with a column computed from the value.
    val mixed = df.selectExpr("length(value) as n", "uuid", "begin", "journal").collect()
    val full = df.select("journal", "begin", "value", "uuid").collect()
      .map(r => (r.getString(0), r.getLong(1)) -> ((r.getAs[Array[Byte]](2).length, r.getString(3)))).toMap
    assert(mixed.length == full.size &&
      mixed.forall(r => full((r.getString(3), r.getLong(2))) == ((r.getInt(0), r.getString(1)))))
  }

  /** The SQL metrics of the last query run, by name, once its tasks' metrics have arrived. */
  private def sqlMetrics(): Map[String, String] = {
    val store = spark.sharedState.statusStore
    def metrics(): Map[String, String] = {
      val exec = store.executionsList().maxBy(_.executionId)
      val names =
        store.planGraph(exec.executionId).allNodes.flatMap(_.metrics).map(m => m.accumulatorId -> m.name).toMap
      store.executionMetrics(exec.executionId).flatMap { case (id, v) => names.get(id).map(_ -> v) }
    }
    val deadline = System.currentTimeMillis() + 10000
    while (!metrics().contains("messages emitted") && System.currentTimeMillis() < deadline) Thread.sleep(100)
    metrics()
  }

  test("bytes read counts each piece's bytes, not those replayed for transactions open where it begins") {
    val journal = "source/metrics-replay/part-000"
    Journals.create(client, Journals.spec(journal))
    Judge.publishEvents(cluster.broker, journal, 40000, seed = 5L)
    val head = client.writeHead(journal)
    assert(head > (3L << 20), "large enough for three pieces of 1 MiB")
    val df = spark.read.format("gazette").option("broker", cluster.broker).option("journals", journal)
      .option("minPartitions", "3").option("bytesPerPartition", (1 << 20).toString).load()
    assert(df.rdd.getNumPartitions >= 3)
    assert(df.count() == Judge.read(cluster.broker, journal).size)
    val m = sqlMetrics()
    assert(m("bytes re-read to replay transactions").toLong > 0, s"no piece replayed a transaction: $m")
    // Every byte fetched is the range's own, or re-read (a replay, a rebuild); pieces also read a
    // little past their ends, to finish the message cut there.
    def metric(name: String) = m(name).toLong
    val read = metric("bytes read from journals")
    assert(read >= head, m)
    assert(
      read + metric("bytes re-read to replay transactions") +
        metric("bytes re-read to rebuild a state no earlier task saved") ==
        metric("bytes read through brokers") + metric("bytes read straight from fragment stores"),
      m
    )
  }

  test("task metrics reach the SQL UI: bytes read, messages emitted, duplicates dropped, rolled-back messages") {
    val journal = "source/metrics/part-000"
    Journals.create(client, Journals.spec(journal))
    Judge.publishScenario(cluster.broker, journal, "duplicates")
    Judge.publishScenario(cluster.broker, journal, "rollback")
    val rows =
      spark.read.format("gazette").option("broker", cluster.broker).option("journals", journal).load().collect()
    val m = sqlMetrics()
    assert(m("messages emitted") == rows.length.toString)
    assert(m("bytes read from journals").toLong == client.writeHead(journal))
    // Two OUTSIDE_TXN re-sends, two inside the open transaction and two after its ACK.
    assert(m("duplicate messages dropped") == "6")
    assert(m("rolled-back messages discarded") == "4")
  }

  test("read uncommitted emits every message as read, ACKs included") {
    val journal = "source/uncommitted/part-000"
    Journals.create(client, Journals.spec(journal))
    Judge.publishScenario(cluster.broker, journal, "rollback")
    val df = spark.read.format("gazette").option("broker", cluster.broker).option("journals", journal)
      .option("readCommitted", "false").load()
    val all = Judge.read(cluster.broker, journal, committed = false)
    assert(keys(df).sortBy(_._2) == all.map(r => (r.journal, r.begin, r.end, r.uuid)))
  }

  test("read uncommitted, a large range of ndjson is read by several tasks, each message once (batch and stream)") {
    val journal = "source/split/part-000"
    Journals.create(client, Journals.spec(journal))
    Judge.publishScenario(cluster.broker, journal, "many-producers")
    val all = Judge.read(cluster.broker, journal, committed = false).map(r => (r.journal, r.begin, r.end, r.uuid))
    val bytes = all.last._3
    val options = Map("broker" -> cluster.broker, "journals" -> journal, "readCommitted" -> "false",
      "bytesPerPartition" -> (bytes / 7).toString)
    val df = spark.read.format("gazette").options(options).load()
    assert(df.rdd.getNumPartitions == 7)
    assertSame(keys(df), Map(journal -> all))
    // The piece that reads the range's last message saves where the next batch resumes; batches
    // that end inside a message leave it to the next.
    val rows = new ConcurrentHashMap[Long, Seq[Key]]()
    runStream(options ++ Map("startingOffsets" -> "earliest", "maxBytesPerTrigger" -> (bytes / 3 + 1).toString),
      Files.createTempDirectory("split").toString, into = rows)
    assertSame(rows.values.asScala.flatten.toSeq, Map(journal -> all))
  }

  test("read committed, a large range of ndjson is read by several tasks, each from the states a first pass finds " +
    "(batch, a batch ending inside transactions, stream)") {
    val journal = "source/split-committed/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    // Transactions of four producers across every piece, with duplicates of messages before a
    // piece, rollbacks of transactions opened before one, and producer 0's transaction open from
    // the first piece to the end, whose ACK comes after a batch that ends before it.
    try {
      w.continue(0)
      for (i <- 0 until 90) {
        val p = 1 + i % 3
        w.continue(p).continue(0)
        i % 9 match {
          case 0 => w.ack(p)
          case 3 => w.rollback(p, i)
          case 5 => w.dup(p, i).commit(p)
          case 7 => w.dup(0, i).ack(p)
          case _ =>
        }
      }
      (1 to 3).foreach(w.ack)
      w.sync()
      w.continue(0).ack(0).sync()
    } finally w.close()
    val all = Judge.read(cluster.broker, journal, committed = false)
    val bytes = all.last.end
    val gazette = Judge.read(cluster.broker, journal).map(r => (r.journal, r.begin, r.end, r.uuid))
    val split = Map("broker" -> cluster.broker, "journals" -> journal, "bytesPerPartition" -> (bytes / 8).toString,
      "minPartitions" -> "4")
    val df = spark.read.format("gazette").options(split).load()
    assert(df.rdd.getNumPartitions == 4)
    assertSame(keys(df), Map(journal -> gazette))
    // Ending before producer 0's ACK: the piece that reads the last messages reads on for it, and
    // emits what of its transaction (opened in the first piece) ends in the batch, as one task does.
    val end = all(all.size - 2).begin
    def upTo(options: Map[String, String]) = keys(spark.read.format("gazette").options(options)
        .option("endingOffsets", s"""{"$journal": $end}""").load()).sortBy(_._2)
    val whole = upTo(split ++ Map("bytesPerPartition" -> (bytes * 2).toString, "minPartitions" -> "1"))
    assert(whole.exists(r => r._2 == all.head.begin), "the open transaction's first message is emitted")
    assert(upTo(split) == whole)
    val rows = new ConcurrentHashMap[Long, Seq[Key]]()
    runStream(
      split ++ Map("startingOffsets" -> "earliest", "maxBytesPerTrigger" -> (bytes / 2 + 1).toString,
        "bytesPerPartition" -> (bytes / 10).toString),
      Files.createTempDirectory("split-committed").toString,
      into = rows
    )
    assertSame(rows.values.asScala.flatten.toSeq, Map(journal -> gazette))
  }

  test("a batch over explicit offsets is deterministic, and a message that ends past its end is left out") {
    val journal = "source/explicit/part-000"
    Journals.create(client, Journals.spec(journal))
    Judge.publishScenario(cluster.broker, journal, "many-producers")
    val all = Judge.read(cluster.broker, journal, committed = false)
    val (from, to) = (all(5).begin, all(all.size / 2).begin + 1) // `to` falls inside a message
    def read() = keys(spark.read.format("gazette").option("broker", cluster.broker).option("journals", journal)
        .option("readCommitted", "false").option("startingOffsets", s"""{"$journal": $from}""")
        .option("endingOffsets", s"""{"$journal": $to}""").load()).sortBy(_._2)
    val first = read()
    assert(first == read())
    assert(first.map(_._2) == all.filter(r => r.begin >= from && r.end <= to).map(_.begin))
  }

  test("batches over adjacent offsets, read committed, emit a transaction spanning their boundary once") {
    val journal = "source/adjacent/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    try w.commit(1).continue(0).continue(0).continue(0).commit(1).ack(0).sync()
    finally w.close()
    val all = Judge.read(cluster.broker, journal, committed = false)
    // The boundary falls inside the transaction, between its first and second message: the first
    // batch reads on to the ACK, and emits of the transaction only what ends before the boundary.
    val boundary = all(2).begin
    def read(start: String, end: String) = keys(spark.read.format("gazette").option("broker", cluster.broker)
        .option("journals", journal).option("startingOffsets", start).option("endingOffsets", end).load())
    val before = read("earliest", s"""{"$journal": $boundary}""")
    val after = read(s"""{"$journal": $boundary}""", "latest")
    assert(before.map(_._2).sorted == all.take(2).map(_.begin), "the first batch emits what ends in it")
    val gazette = Judge.read(cluster.broker, journal).map(r => (r.journal, r.begin, r.end, r.uuid))
    assertSame(before ++ after, Map(journal -> gazette))
  }

  test("a journal that vanishes fails the stream naming it, unless failOnDataLoss is false") {
    val journal = "source/vanishing/part-000"
    val other = "source/vanishing/part-001"
    Journals.create(client, Journals.spec(journal), Journals.spec(other))
    Judge.publishScenario(cluster.broker, journal, "committed")
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    val options =
      Map("broker" -> cluster.broker, "selector" -> "prefix=source/vanishing/", "startingOffsets" -> "earliest")
    val batches = new ConcurrentHashMap[Long, Seq[Key]]()
    runStream(options, checkpoint, into = batches)
    assert(batches.values().asScala.flatten.size == 30)
    client.apply(Seq(io.sparkgazette.client.protocol.ApplyRequest.Change(expectModRevision = -1, delete = journal)))
    val e = intercept[Exception](runStream(options, checkpoint, into = batches))
    assert(e.getMessage.contains(s"Data loss in journal $journal") && e.getMessage.contains("'failOnDataLoss'"))
    // Without failOnDataLoss the stream goes on with the journal left, and only with it.
    Judge.publishScenario(cluster.broker, other, "committed")
    val before = batches.values().asScala.flatten.toSeq
    batches.clear()
    runStream(options + ("failOnDataLoss" -> "false"), checkpoint, into = batches)
    val after = batches.values().asScala.flatten.toSeq
    val expected = Judge.read(cluster.broker, other).map(r => (r.journal, r.begin, r.end, r.uuid))
    assert(before.size == 30 && after.sortBy(_._2) == expected.sortBy(_._2),
      s"after the journal vanished: ${after.size} rows, ${expected.size} expected from $other")
  }

  test("bad options fail naming the option") {
    def error(options: (String, String)*): String = intercept[IllegalArgumentException](
      spark.read.format("gazette").options(options.toMap).load().collect()).getMessage
    assert(error("selector" -> "prefix=x/") contains "'broker' is required")
    assert(error("broker" -> cluster.broker, "selector" -> "app=b", "journals" -> "x") contains
      "'selector' and 'journals' cannot be used together")
    assert(error("broker" -> cluster.broker, "selector" -> "app=b", "maxBytesPerTriger" -> "1") contains
      "Unknown Gazette option 'maxBytesPerTriger'")
    assert(error("broker" -> cluster.broker, "selector" -> "a in (", "readCommitted" -> "yes") contains
      "'selector' has invalid value")
    assert(error("broker" -> cluster.broker, "startingOffsets" -> "{\"x\": \"y\"}", "selector" -> "app=x") contains
      "'startingOffsets' has invalid value")
    assert(error("broker" -> "ftp://x", "selector" -> "app=b") contains "'broker' has invalid value 'ftp://x'")
  }
}
