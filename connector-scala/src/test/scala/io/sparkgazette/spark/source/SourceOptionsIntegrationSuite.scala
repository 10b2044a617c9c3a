package io.sparkgazette.spark
package source

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths}

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import io.sparkgazette.client.protocol.CompressionCodec
import io.sparkgazette.message.{Flags, ProducerId, Uuid}
import io.sparkgazette.spark.source.offsets.JournalOffsets
import io.sparkgazette.spark.source.reading.SourceMetrics
import io.sparkgazette.spark.testing.MessageKey
import io.sparkgazette.testing.{Journals, Judge, MovedUuids, SparkClusterSuite}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.apache.spark.sql.streaming.{StreamingQueryProgress, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/** The source's options and reports end to end, each judged by Gazette's own reader over the
  * same bytes: malformed messages skipped, fragments read from the store, streams that begin
  * inside a transaction, and the metrics of its progress.
  */
class SourceOptionsIntegrationSuite extends AnyFunSuite with SparkClusterSuite {

  private def keys(df: DataFrame): Seq[MessageKey] = collectKeys(df.select("journal", "begin", "end", "uuid"))

  // Collects `df` itself, whose four columns are a MessageKey's, so that its plan holds the metrics.
  private def collectKeys(df: DataFrame): Seq[MessageKey] =
    df.collect().toSeq.map(r => (r.getString(0), r.getLong(1), r.getLong(2), Option(r.getString(3)).getOrElse("")))
      .sortBy(_._2)

  private def judged(journal: String, from: Long = 0L, skipMalformed: Boolean = false): Seq[MessageKey] =
    Judge.read(cluster.broker, journal, from = from, skipMalformed = skipMalformed)
      .map(r => (r.journal, r.begin, r.end, r.uuid)).sortBy(_._2)

  private def batch(journal: String, extra: (String, String)*): DataFrame =
    spark.read.format("gazette").option("broker", cluster.broker).option("journals", journal).options(extra.toMap)
      .load()

  // A task metric of the scan `df` ran.
  private def scanMetric(df: DataFrame, name: String): Long =
    df.queryExecution.executedPlan.collectFirst { case s: BatchScanExec => s.metrics(name).value }.get

  /** One AvailableNow run from `checkpoint`: the rows of every batch, and the progress of each. */
  private def stream(options: Map[String, String], checkpoint: String)
      : (Seq[MessageKey], Seq[StreamingQueryProgress]) = {
    val rows = new java.util.concurrent.ConcurrentLinkedQueue[MessageKey]()
    val q = spark.readStream.format("gazette").options(options).load()
      .writeStream.option("checkpointLocation", checkpoint).trigger(Trigger.AvailableNow())
      .foreachBatch { (df: DataFrame, _: Long) => keys(df).foreach(rows.add); () }
      .start()
    try assert(q.awaitTermination(60000), s"the query did not end: ${q.recentProgress.lastOption.map(_.json)}")
    finally q.stop()
    (rows.asScala.toSeq.sortBy(_._2), q.recentProgress.toSeq)
  }

  test("failOnMalformed=false skips malformed messages, counts them, and reads the rest as Gazette's reader does") {
    val journal = "options/malformed/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    try
      w.commit(0).continue(1).raw("not json\n".getBytes(UTF_8)).continue(1).raw("]]\n".getBytes(UTF_8)).ack(1)
        .commit(0).sync()
    finally w.close()
    val garbageAt = Judge.read(cluster.broker, journal, committed = false, skipMalformed = true)(1).end

    val e = intercept[Exception](batch(journal).collect())
    assert(e.getMessage.contains(s"journal $journal at offset $garbageAt") && e.getMessage.contains("failOnMalformed"),
      e.getMessage)

    val expected = judged(journal, skipMalformed = true)
    assert(expected.size == 4, s"Gazette's reader skipping malformed messages read $expected")
    val df = batch(journal, "failOnMalformed" -> "false").select("journal", "begin", "end", "uuid")
    assert(collectKeys(df) == expected)
    assert(scanMetric(df, SourceMetrics.MalformedSkipped) == 2)
    val (streamed, _) = stream(
      Map("broker" -> cluster.broker, "journals" -> journal, "startingOffsets" -> "earliest",
        "failOnMalformed" -> "false"),
      Files.createTempDirectory("gazette-ckpt").toString
    )
    assert(streamed == expected)
  }

  test("read committed in pieces, a malformed line before the last piece fails the batch, or is skipped as one " +
    "task skips it") {
    val journal = "options/malformed-split/part-000"
    Journals.create(client, Journals.spec(journal))
    // Not JSON, yet an ACK's UUID lies where the source looks for one: the first pass, which checks
    // no line's JSON where a malformed line fails the read, takes it for an ACK.
    val ackLike =
      s"""{"_meta":{"uuid":"${Uuid.build(ProducerId(0x010000000001L), 1L << 60, Flags.AckTxn)}"},"x":tru}\n"""
    val w = Judge.script(cluster.broker, journal)
    try {
      (0 until 10).foreach(i => w.continue(i % 2).commit(2))
      w.raw(ackLike.getBytes(UTF_8))
      (0 until 50).foreach(i => w.continue(i % 2).commit(2))
      w.ack(0).ack(1).sync()
    } finally w.close()
    val split = Seq("bytesPerPartition" -> "1024", "minPartitions" -> "2")
    assert(batch(journal, split: _*).rdd.getNumPartitions == 2)
    val e = intercept[Exception](batch(journal, split: _*).collect())
    assert(e.getMessage.contains(s"journal $journal at offset") && e.getMessage.contains("failOnMalformed"),
      e.getMessage)
    val df = batch(journal, split :+ ("failOnMalformed" -> "false"): _*).select("journal", "begin", "end", "uuid")
    assert(collectKeys(df) == judged(journal, skipMalformed = true))
  }

  test("fragmentRoot: persisted fragments are read from the store's files, not through the broker") {
    val journal = "options/fragment-root/part-000"
    // The smallest fragment length makes the broker roll, and so persist, almost every append.
    Journals.create(client, Journals.spec(journal, fragmentLength = 1024, codec = CompressionCodec.NONE))
    (0 until 40).foreach(i =>
      client.append(journal,
        com.google.protobuf.ByteString.copyFromUtf8(
          (0 until 10).map(k => s"""{"i":$i,"k":$k,"mark":"aaaa"}""" + "\n").mkString)))
    val deadline = 30.seconds.fromNow
    def persisted = client.listFragments(journal).map(_.getSpec).filter(_.modTime != 0)
    while (persisted.size < 3 && !deadline.isOverdue()) Thread.sleep(200)
    assert(persisted.size >= 3, "fragments were not persisted")

    // A copy of the store in which one persisted message reads differently: only a reader of the
    // files sees it.
    val copy = Files.createTempDirectory("gazette-store")
    val source = Paths.get(cluster.fragmentRoot)
    // The broker writes each fragment under a temporary name before renaming it: copy only the
    // fragments themselves.
    Files.walk(source.resolve(journal)).iterator().asScala.foreach { p =>
      val to = copy.resolve(source.relativize(p).toString)
      if (Files.isDirectory(p)) Files.createDirectories(to)
      else if (p.getFileName.toString.matches("[0-9a-f]{16}-[0-9a-f]{16}-.*")) Files.copy(p, to)
    }
    val file: Path = Files.walk(copy).iterator().asScala.filter(p => Files.isRegularFile(p)).toList.sortBy(_.toString)
      .find(p => new String(Files.readAllBytes(p), UTF_8).contains(""""i":0,"k":3,"mark":"aaaa"""")).get
    Files.writeString(
      file, Files.readString(file).replace(""""i":0,"k":3,"mark":"aaaa"""", """"i":0,"k":3,"mark":"bbbb""""))

    def marks(extra: (String, String)*) =
      batch(journal, extra: _*).selectExpr("cast(value as string)").collect().map(_.getString(0)).toSeq
    val throughBroker = marks()
    val fromFiles = marks("fragmentRoot" -> copy.toString)
    assert(throughBroker.size == 400 && fromFiles.size == 400)
    assert(throughBroker.count(_.contains("bbbb")) == 0)
    assert(fromFiles.diff(throughBroker) == Seq("""{"i":0,"k":3,"mark":"bbbb"}"""),
      "the source did not read the persisted fragment from fragmentRoot")
    val expected = judged(journal)
    assert(keys(batch(journal, "fragmentRoot" -> cluster.fragmentRoot)) == expected)
  }

  test("a journal read in pieces costs its broker each piece's bytes, not what streams on past a piece's end") {
    val journal = "options/pieces-cost/part-000"
    Journals.create(client, Journals.spec(journal, codec = CompressionCodec.NONE))
    val line = (i: Int) => s"""{"i":$i,"pad":"${"x" * 1000}"}""" + "\n"
    (0 until 4).foreach(a =>
      client.append(
        journal, com.google.protobuf.ByteString.copyFromUtf8((0 until 4096).map(i => line(a * 4096 + i)).mkString)))
    val size = client.writeHead(journal)
    // What a broker sends for the Reads it serves: each response holds at most 32 KiB of content.
    def responsesSent(): Long = {
      val metrics = scala.io.Source.fromURL(s"${cluster.broker}/debug/metrics").mkString
      "(?m)^grpc_server_msg_sent_total\\{grpc_method=\"Read\"[^}]*\\} (\\S+)$".r.findFirstMatchIn(metrics)
        .map(_.group(1).toDouble.toLong).getOrElse(0L)
    }
    val once = size / (32 * 1024) + 1
    for ((what, options, passes) <- Seq(
        ("uncommitted", Seq("readCommitted" -> "false", "bytesPerPartition" -> (2L << 20).toString), 1),
        ("committed", Seq("minPartitions" -> "8", "bytesPerPartition" -> (1L << 20).toString), 2)
      )) {
      val df = batch(journal, options: _*)
      val pieces = df.rdd.getNumPartitions
      assert(pieces >= 6, s"$what: $pieces pieces")
      val before = responsesSent()
      assert(df.selectExpr("sum(length(value))").collect().head.getLong(0) == size - 16384, what)
      val sent = responsesSent() - before
      // Each Read begins with a response of its own, and a piece reads a little past its end for the
      // message that crosses it: 8 responses a piece cover those.
      assert(sent <= passes * once + 8 * pieces,
        s"read $what in $pieces pieces, the broker sent $sent responses where the bytes take $once")
    }
  }

  // Messages far longer than a piece's first 64 KiB past its end (several doublings
  // of its Read's bound) cross the pieces' ends, between the messages of transactions that stay open
  // across pieces; fragments gzip-compressed and persisted, read through the broker and from fragmentRoot.
  test(
    "pieces whose end lies in a message several times 64 KiB long, inside open transactions, read as Gazette's reader") {
    val journal = "options/pieces-long/part-000"
    Journals.create(client, Journals.spec(journal, fragmentLength = 1 << 20, codec = CompressionCodec.GZIP))
    val w = Judge.script(cluster.broker, journal)
    try {
      (0 until 24).foreach { i =>
        val pad = ("abcdefghijklmnopqrstuvwxyz" * 20000).take(150000 + i * 7919)
        w.continue(0).raw(s"""{"i":$i,"pad":"$pad"}\n""".getBytes(UTF_8)).commit(1)
        if (i % 5 == 4) w.ack(0)
      }
      w.ack(0).sync()
    } finally w.close()
    val deadline = System.currentTimeMillis() + 60000
    while (client.listFragments(journal).map(_.getSpec).count(_.modTime != 0) < 3) {
      assert(System.currentTimeMillis() < deadline, "fragments were not persisted")
      Thread.sleep(200)
    }
    val committed = judged(journal)
    val uncommitted =
      Judge.read(cluster.broker, journal, committed = false).map(r => (r.journal, r.begin, r.end, r.uuid))
        .sortBy(_._2)
    for ((what, options, expected) <- Seq(
        ("uncommitted", Seq("readCommitted" -> "false"), uncommitted),
        ("committed", Seq("readCommitted" -> "true"), committed),
        ("committed from fragmentRoot", Seq("readCommitted" -> "true", "fragmentRoot" -> cluster.fragmentRoot),
          committed)
      )) {
      val df = batch(journal, options ++ Seq("bytesPerPartition" -> (1L << 20).toString, "minPartitions" -> "8"): _*)
      assert(df.rdd.getNumPartitions >= 4, what)
      assert(keys(df) == expected, what)
    }
  }

  // A piece's Reads end at `bound` (its end + 64 KiB, then doubling). A hole that
  // retention made, skipped with failOnDataLoss=false, can move the read past `bound`: the Read that
  // follows must not be opened with an end before its offset.
  test("failOnDataLoss=false: a hole across a piece's end, longer than its 64 KiB read past the end, is skipped") {
    val journal = "options/pieces-hole/part-000"
    Journals.create(client, Journals.spec(journal, fragmentLength = 256 << 10, codec = CompressionCodec.NONE))
    val line = (i: Int) => s"""{"i":$i,"pad":"${"x" * 1000}"}""" + "\n"
    // One append a fragment: 300 lines of about 1 KiB each is past the fragment length.
    val appends = (0 until 16).map { a =>
      val is = (a * 300) until ((a + 1) * 300)
      val f = client.append(journal, com.google.protobuf.ByteString.copyFromUtf8(is.map(line).mkString))
      (f.begin, f.end, is)
    }
    val deadline = System.currentTimeMillis() + 60000
    def listed = client.listFragments(journal).map(_.getSpec)
    // The fragments to remove are persisted, and the broker serves them from the store only.
    val victims = appends.slice(3, 10)
    def persisted = victims.forall { case (b, e, _) =>
      listed.exists(f => f.begin == b && f.end == e && f.modTime != 0)
    }
    while (!persisted) {
      assert(System.currentTimeMillis() < deadline, s"not persisted: $listed")
      Thread.sleep(200)
    }
    val dir = Paths.get(cluster.fragmentRoot, journal)
    victims.foreach { case (b, e, _) =>
      Files.list(dir).iterator().asScala.filter(_.getFileName.toString.startsWith(f"$b%016x-$e%016x"))
        .foreach(Files.delete(_))
    }
    val (holeBegin, holeEnd) = (victims.head._1, victims.last._2)
    while (listed.exists(f => f.begin < holeEnd && f.end > holeBegin)) {
      assert(System.currentTimeMillis() < deadline, s"the fragments were not removed: $listed")
      Thread.sleep(200)
    }
    val expected = appends.filterNot(victims.contains).flatMap(_._3)
    for ((what, options) <- Seq(
        "uncommitted" -> Seq("readCommitted" -> "false"),
        "committed" -> Seq("readCommitted" -> "true"))) {
      val df = batch(journal,
        options ++ Seq("bytesPerPartition" -> (1L << 20).toString, "minPartitions" -> "6",
          "failOnDataLoss" -> "false", "retryTimeout" -> "2s"): _*)
      assert(df.rdd.getNumPartitions >= 3, what)
      val rows = df.selectExpr("cast(get_json_object(cast(value as string), '$.i') as int)").collect()
        .map(_.getInt(0)).toSeq.sorted
      assert(rows == expected, s"$what: ${rows.size} rows, ${expected.size} expected")
    }
  }

  test(
    "a stream that begins inside a transaction, at the latest offset or an explicit one, reads as Gazette's reader from there") {
    val journal = "options/inside-transaction/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    try {
      w.commit(0).continue(1).continue(1).sync()
      val open = Judge.read(cluster.broker, journal, committed = false)
      val secondContinue = open(2).begin
      val head = client.writeHead(journal)
      val base = Map("broker" -> cluster.broker, "journals" -> journal)
      val (latest, explicit) = (Files.createTempDirectory("gazette-ckpt").toString,
        Files.createTempDirectory("gazette-ckpt").toString)
      assert(stream(base + ("startingOffsets" -> "latest"), latest)._1.isEmpty)
      assert(stream(base + ("startingOffsets" -> s"""{"$journal": $secondContinue}"""), explicit)._1.isEmpty)
      w.ack(1).commit(0).continue(1).ack(1).sync()
      val fromHead = stream(base, latest)._1
      assert(fromHead == judged(journal, from = head) && fromHead.size == 2, s"from the latest offset: $fromHead")
      val fromInside = stream(base, explicit)._1
      assert(fromInside == judged(journal, from = secondContinue) && fromInside.size == 3,
        s"from offset $secondContinue: $fromInside")
    } finally w.close()
  }

  test("uuidPointer: UUIDs elsewhere in each document sequence transactions, rollbacks and duplicates as " +
    "Gazette's reader sequences them at its own place") {
    val scratch = "options/uuid-pointer-go/part-000"
    val journal = "options/uuid-pointer/part-000"
    Journals.create(client, Journals.spec(scratch), Journals.spec(journal))
    val w = Judge.script(cluster.broker, scratch)
    try w.commit(0).continue(1).continue(1).ack(1).continue(1).rollback(1, 0).dup(0, 0).commit(2).noUuid().continue(3)
        .sync()
    finally w.close()
    // The same messages, each with its UUID at /meta/id instead.
    val path = Seq("meta", "id")
    val all = Judge.read(cluster.broker, scratch, committed = false)
    val moved = Judge.script(cluster.broker, journal)
    try {
      all.foreach(r => moved.raw((MovedUuids.place(r.payload, r.uuid, path) + "\n").getBytes(UTF_8))); moved.sync()
    } finally moved.close()
    val expected = Judge.read(cluster.broker, scratch).map(r => MovedUuids.strip(r.payload, path))
    assert(expected.nonEmpty && expected.size < all.count(_.flags != Flags.AckTxn) - 1,
      s"the history has no rollback or duplicate to drop: $expected")
    val got = batch(journal, "uuidPointer" -> "/meta/id").select("value").collect()
      .map(r => MovedUuids.strip(new String(r.getAs[Array[Byte]](0), UTF_8), path)).toSeq
    assert(got == expected)
  }

  test("rebuiltBytes: the batch after one read only in part rebuilds its state from where the last batch read " +
    "whole ended, and counts those bytes") {
    val journal = "options/rebuilt/part-000"
    Journals.create(client, Journals.spec(journal))
    Judge.publishRandom(cluster.broker, journal, 901L)
    val rebuiltIn = new java.util.concurrent.ConcurrentHashMap[Long, Long]()
    val q = spark.readStream.format("gazette").option("broker", cluster.broker).option("journals", journal)
      .option("startingOffsets", "earliest").option("maxBytesPerTrigger", "2000").load()
      .writeStream.queryName("rebuilt").option("checkpointLocation", Files.createTempDirectory("gazette-ckpt").toString)
      .trigger(Trigger.AvailableNow())
      .foreachBatch { (df: DataFrame, id: Long) =>
        // Batch 2 reads one row: its task stops there and saves no state at the batch's end.
        val read = if (id == 2) df.limit(1) else df
        read.collect()
        rebuiltIn.put(id, SourcePropertyIntegrationSuite.taskMetrics(spark, "rebuilt")(SourceMetrics.RebuiltBytes))
        ()
      }
      .start()
    try assert(q.awaitTermination(60000), s"the query did not end: ${q.recentProgress.lastOption.map(_.json)}")
    finally q.stop()
    val batches = q.recentProgress.toSeq.filter(_.numInputRows > 0).map { p =>
      val start = Option(p.sources.head.startOffset).map(JournalOffsets.parsePositions).flatMap(_.get(journal))
      (p.batchId, start.fold(0L)(_.offset), rebuiltIn.get(p.batchId))
    }
    assert(batches.map(_._1).take(4) == Seq(0L, 1L, 2L, 3L), s"too few batches: $batches")
    val startOf = batches.map(b => b._1 -> b._2).toMap
    // States lie at message boundaries and batches here begin inside messages: the rebuild covers
    // the limited batch's bytes, give or take the messages its ends cut.
    val largest = Judge.read(cluster.broker, journal, committed = false).map(r => r.end - r.begin).max
    batches.foreach { case (id, start, rebuilt) =>
      if (id == 3) {
        val skipped = start - startOf(2)
        assert(
          rebuilt > skipped - largest && rebuilt < skipped + largest,
          s"batch 3 (from offset $start) rebuilt $rebuilt bytes, not the $skipped of batch 2 (messages of up to " +
            s"$largest bytes): $batches"
        )
      } else assert(rebuilt == 0, s"batch $id (from offset $start) rebuilt $rebuilt bytes: $batches")
    }
    assert(startOf(3) > startOf(2) && startOf(2) > 0)
  }

  test("each batch's progress reports the source's own metrics") {
    val journals = Seq("options/metrics/part-000", "options/metrics/part-001")
    Journals.create(client, journals.map(Journals.spec(_)): _*)
    journals.zipWithIndex.foreach { case (j, i) => Judge.publishRandom(cluster.broker, j, 700L + i) }
    val (rows, progress) = stream(
      Map("broker" -> cluster.broker, "selector" -> "prefix=options/metrics/", "startingOffsets" -> "earliest",
        "maxBytesPerTrigger" -> "3000"),
      Files.createTempDirectory("gazette-ckpt").toString
    )
    assert(rows.sortBy(r => (r._1, r._2)) == journals.flatMap(judged(_)))
    val read = progress.filter(_.numInputRows > 0)
    assert(read.size > 1, s"${read.size} batches")
    read.foreach { p =>
      val m = p.sources.head.metrics.asScala
      Seq("latestOffsetMs", "planMs", "commitMs", "bytesSkippedAtPlanning", "journalsWaitingForHead", "tasks")
        .foreach(k => assert(m.get(k).exists(v => v.toLong >= 0), s"batch ${p.batchId}: $k is ${m.get(k)}"))
      assert(m("bytesSkippedAtPlanning") == "0" && m("journalsWaitingForHead") == "0")
      val ranges = JournalOffsets.parsePositions(p.sources.head.endOffset).count { case (j, e) =>
        Option(p.sources.head.startOffset).map(JournalOffsets.parsePositions).flatMap(_.get(j)).forall(
          _.offset < e.offset)
      }
      assert(m("tasks").toInt >= 1 && m("tasks").toInt <= ranges,
        s"batch ${p.batchId}: ${m("tasks")} tasks for $ranges journals with bytes")
    }
  }
}
