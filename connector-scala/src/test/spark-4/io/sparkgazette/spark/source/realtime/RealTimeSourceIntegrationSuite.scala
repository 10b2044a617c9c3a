package io.sparkgazette.spark
package source
package realtime

import java.nio.file.Files
import java.util.concurrent.{ConcurrentHashMap, ConcurrentLinkedQueue}

import scala.jdk.CollectionConverters._

import io.sparkgazette.client.protocol.{ApplyRequest, JournalSpec}
import io.sparkgazette.message.{Framing, ProducerState}
import io.sparkgazette.spark.hadoop.SerializableConfiguration
import io.sparkgazette.spark.source.offsets.{
  JournalOffsets, JournalPosition, JournalRange, JournalTarget, SourceOptions
}
import io.sparkgazette.spark.source.planning.{JournalDirectory, PlanningAhead}
import io.sparkgazette.spark.source.reading.{ReaderConfig, SourceMetrics}
import io.sparkgazette.spark.source.rows.{MessageToRow, RowShape}
import io.sparkgazette.testing.{Journals, Judge, RealTimeClusterSuite}
import org.apache.spark.sql.connector.read.InputPartition
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.sql.{ForeachWriter, Row}
import org.scalatest.funsuite.AnyFunSuite

/** The source in real-time mode (`Trigger.RealTime`) against a real broker, judged by Gazette's
  * own ReadCommittedIter: every committed message exactly once across real-time batches, whose
  * ends fall where time is up (inside transactions too), and across a restart from the
  * checkpoint, with journals multiplexed over fewer tasks than journals; and what a task that
  * runs for a whole batch meets: journals suspended, deleted or whose head went back, large
  * messages, replays, and options that only micro-batches take.
  */
class RealTimeSourceIntegrationSuite extends AnyFunSuite with RealTimeClusterSuite {
  import RealTimeSourceIntegrationSuite._

  private def start(options: Map[String, String], checkpoint: String, batch: String = "3 seconds"): StreamingQuery =
    spark.readStream.format("gazette").options(options).load()
      .select("journal", "begin", "end", "uuid")
      .writeStream.option("checkpointLocation", checkpoint)
      .outputMode("update")
      .trigger(Trigger.RealTime(batch))
      .foreach(new Collect)
      .start()

  // Rows by batch and task: a batch run again after a restart replaces what its first run wrote.
  private def collected: Seq[Key] = written.values().asScala.toSeq.flatMap(_.asScala)

  private def await(what: String, timeoutMs: Long = 60000)(done: => Boolean): Unit = {
    val deadline = System.currentTimeMillis() + timeoutMs
    while (!done) {
      if (System.currentTimeMillis() > deadline) fail(s"timed out waiting for $what")
      Thread.sleep(50)
    }
  }

  private def batchesDone(q: StreamingQuery): Long = Option(q.lastProgress).map(_.batchId + 1).getOrElse(0L)

  private def readerConfig(journals: Seq[String], extra: Map[String, String] = Map.empty): ReaderConfig = {
    val options = SourceOptions.parse(
      new CaseInsensitiveStringMap(
        (Map("broker" -> cluster.broker, "journals" -> journals.mkString(",")) ++ extra).asJava),
      streaming = true)
    ReaderConfig(
      options,
      Some(Files.createTempDirectory("gazette-rtm-reader").toString),
      new SerializableConfiguration(spark.sparkContext.hadoopConfiguration),
      RowShape(MessageToRow.schema(false).fieldNames.toSeq)
    )
  }

  // A real-time task's reader of `journals` from their first byte, with no saved state.
  private def realTimeReader(journals: Seq[String], extra: Map[String, String] = Map.empty): RealTimeJournalReader =
    new RealTimeJournalReader(
      RealTimeTask(journals.map(j =>
          RealTimeJournal(JournalRange(j, Framing.JsonLines, Map.empty, 0L, Long.MaxValue, origin = 0L), Some(Nil)))),
      readerConfig(journals, extra)
    )

  private def rowKey(r: org.apache.spark.sql.catalyst.InternalRow): Key = {
    val schema = MessageToRow.schema(false)
    def col(n: String) = schema.fieldIndex(n)
    (r.getUTF8String(col("journal")).toString, r.getLong(col("begin")), r.getLong(col("end")),
      Option(r.getUTF8String(col("uuid"))).map(_.toString).getOrElse(""))
  }

  // The rows a reader hands out until none comes for `quietMs`.
  private def drain(reader: RealTimeJournalReader, quietMs: Long): Seq[Key] = {
    val out = Seq.newBuilder[Key]
    while (reader.nextWithin(System.currentTimeMillis(), quietMs)) out += rowKey(reader.get())
    out.result()
  }

  // The rows a reader hands out for `ms`, however many come.
  private def readFor(reader: RealTimeJournalReader, ms: Long): Seq[Key] = {
    val out = Seq.newBuilder[Key]
    val deadline = System.currentTimeMillis() + ms
    var left = ms
    while (left > 0) {
      if (reader.nextWithin(System.currentTimeMillis(), left)) out += rowKey(reader.get())
      left = deadline - System.currentTimeMillis()
    }
    out.result()
  }

  private def reached(reader: RealTimeJournalReader): JournalsReached = reader.getOffset.asInstanceOf[JournalsReached]

  // What brokers' auto-suspension records once every fragment is persisted.
  private def suspend(journal: String): Unit = {
    val spec = client.list(s"name=$journal").head.getSpec
    client.upsert(spec.withSuspend(JournalSpec.Suspend(JournalSpec.Suspend.Level.FULL, client.writeHead(journal))))
  }

  test("real-time batches emit every committed message exactly once, as Gazette reads them, across batch " +
    "ends inside transactions, rollbacks, duplicates and a restart") {
    val prefix = "source/real-time"
    val random = Seq(s"$prefix/part-000" -> Framing.JsonLines, s"$prefix/part-001" -> Framing.Csv)
    val scripted = s"$prefix/part-002"
    Journals.create(client,
      (random :+ (scripted -> Framing.JsonLines)).map { case (j, ct) =>
        Journals.spec(j, labels = Seq("content-type" -> ct))
      }: _*)
    random.zipWithIndex.foreach { case ((j, _), i) => Judge.publishRandom(cluster.broker, j, 40L + i) }
    val w = Judge.script(cluster.broker, scripted)
    // Producer 0's transaction is open when the query starts; 3's is rolled back by an old ACK.
    w.continue(0).continue(0).commit(1).continue(3).ack(3).sync()

    // Three journals over two tasks; a ring of two messages, so longer transactions are replayed.
    val options = Map("broker" -> cluster.broker, "selector" -> s"prefix=$prefix/", "startingOffsets" -> "earliest",
      "realTimePartitions" -> "2", "sequencerRingSize" -> "2")
    val checkpoint = Files.createTempDirectory("gazette-rtm").toString
    written.clear()
    try {
      val first = start(options, checkpoint)
      try {
        await("the first batch")(batchesDone(first) >= 1)
        // Committed within a batch: a row is there long before the batch ends.
        val before = collected.size
        val t0 = System.currentTimeMillis()
        w.ack(0).continue(3).continue(3).rollback(3, 0).dup(0, 0).commit(2).sync()
        await("producer 0's transaction and producer 2's message")(collected.size >= before + 3)
        val latencyMs = System.currentTimeMillis() - t0
        assert(latencyMs < 2500, s"rows took $latencyMs ms")
        // A transaction open across a batch end, acknowledged in a later batch.
        w.continue(4).continue(4).sync()
        val at = batchesDone(first)
        await("another batch")(batchesDone(first) > at)
        w.continue(4).ack(4).dup(4, 1).sync()
        await("two batches")(batchesDone(first) >= 3)
        // Stopped mid-batch with producer 5's transaction open.
        w.continue(5).commit(1).sync()
        Thread.sleep(500)
      } finally first.stop()
      w.continue(5).continue(2).ack(2).noUuid().sync()

      val second = start(options, checkpoint)
      try {
        await("a batch after the restart")(batchesDone(second) >= 1)
        w.ack(5).dup(5, 0).commit(1).sync()
        w.close()
        val expected = (random.map(_._1) :+ scripted).flatMap(j =>
          Judge.read(cluster.broker, j).map(r => (r.journal, r.begin, r.end, r.uuid)))
        await("every committed message")(collected.size >= expected.size)
        val at = batchesDone(second)
        await("one more batch")(batchesDone(second) > at)
        val rows = collected
        assert(rows.size == rows.distinct.size, "a message was emitted twice")
        assert(rows.sortBy(r => (r._1, r._2)) == expected.sortBy(r => (r._1, r._2)))
      } finally second.stop()
    } finally w.close()
  }

  test(
    "a checkpoint last run in real-time mode is refused by micro-batches, which could not continue it exactly once") {
    val journal = "source/real-time-back/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    val options = Map("broker" -> cluster.broker, "journals" -> journal, "startingOffsets" -> "earliest")
    val checkpoint = Files.createTempDirectory("gazette-rtm-back").toString
    written.clear()
    try {
      w.commit(0).continue(1).sync()
      val q = start(options, checkpoint)
      try await("a real-time batch")(batchesDone(q) >= 1)
      finally q.stop()
      val micro = spark.readStream.format("gazette").options(options).load()
        .writeStream.option("checkpointLocation", checkpoint).trigger(Trigger.AvailableNow())
        .foreachBatch { (df: org.apache.spark.sql.DataFrame, _: Long) => df.collect(); () }
      w.ack(1).sync()
      val e = intercept[Exception](micro.start().awaitTermination(600000))
      assert(e.getMessage.contains("GAZETTE_UNSUPPORTED_TRIGGER") && e.getMessage.contains("last run in real-time"),
        e.getMessage)
    } finally w.close()
  }

  test("a query read in micro-batches continues in real-time mode from its checkpoint, each message once") {
    val journal = "source/real-time-switch/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    val options = Map("broker" -> cluster.broker, "journals" -> journal, "startingOffsets" -> "earliest")
    val checkpoint = Files.createTempDirectory("gazette-rtm-switch").toString
    written.clear()
    val micro = new ConcurrentLinkedQueue[Key]()
    try {
      // The micro-batches end with producer 0's transaction open: its state is saved in a file.
      // Spark switches a checkpoint to real-time mode only from its format version 2.
      spark.conf.set("spark.sql.streaming.stateStore.checkpointFormatVersion", "2")
      w.continue(0).continue(0).commit(1).continue(3).ack(3).sync()
      spark.readStream.format("gazette").options(options).load()
        .writeStream.option("checkpointLocation", checkpoint).trigger(Trigger.AvailableNow())
        .foreachBatch { (df: org.apache.spark.sql.DataFrame, _: Long) =>
          df.select("journal", "begin", "end", "uuid").collect().foreach(r =>
            micro.add((r.getString(0), r.getLong(1), r.getLong(2), Option(r.getString(3)).getOrElse(""))))
          ()
        }
        .start().awaitTermination(600000)
      assert(micro.size == 2)
      w.continue(0).ack(0).continue(3).rollback(3, 0).commit(2).sync()
      val q = start(options, checkpoint)
      try {
        val expected = Judge.read(cluster.broker, journal).map(r => (r.journal, r.begin, r.end, r.uuid))
        await("every committed message")(micro.size + collected.size >= expected.size)
        val at = batchesDone(q)
        await("one more batch")(batchesDone(q) > at)
        val rows = micro.asScala.toSeq ++ collected
        assert(rows.size == rows.distinct.size, "a message was emitted twice")
        assert(rows.sortBy(_._2) == expected.sortBy(_._2))
      } finally q.stop()
    } finally {
      w.close()
      spark.conf.unset("spark.sql.streaming.stateStore.checkpointFormatVersion")
    }
  }

  test("a real-time batch that ends between two rows of one commit, or right after a row, leaves the rest to the " +
    "next batch, once") {
    val journal = "source/real-time-cut/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    try w.continue(0).continue(0).continue(1).continue(0).dup(0, 1).continue(0).ack(0).commit(2).ack(1).continue(2)
        .ack(2).sync()
    finally w.close()
    val expected = Judge.read(cluster.broker, journal).map(r => (r.journal, r.begin, r.end, r.uuid))
    assert(expected.size == 7)
    val options = SourceOptions.parse(
      new CaseInsensitiveStringMap(Map("broker" -> cluster.broker, "journals" -> journal).asJava), streaming = true)
    val config = ReaderConfig(
      options,
      Some(Files.createTempDirectory("gazette-rtm-cut").toString),
      new SerializableConfiguration(spark.sparkContext.hadoopConfiguration),
      RowShape(MessageToRow.schema(false).fieldNames.toSeq)
    )
    val range = JournalRange(journal, Framing.JsonLines, Map.empty, 0L, Long.MaxValue, origin = 0L)
    def key(r: org.apache.spark.sql.catalyst.InternalRow): Key = {
      val schema = MessageToRow.schema(false)
      def col(n: String) = schema.fieldIndex(n)
      (r.getUTF8String(col("journal")).toString, r.getLong(col("begin")), r.getLong(col("end")),
        Option(r.getUTF8String(col("uuid"))).map(_.toString).getOrElse(""))
    }
    // Reads from `from` with `states`: `rows` rows (all there are, if None), and where it stands.
    def batch(from: Long, states: Seq[ProducerState], rows: Option[Int],
        config: ReaderConfig = config): (Seq[Key], JournalsReached) = {
      val reader = new RealTimeJournalReader(
        RealTimeTask(Seq(RealTimeJournal(range.copy(start = from), Some(states)))), config)
      try {
        val out = Seq.newBuilder[Key]
        var n = 0
        while (rows.forall(n < _) && reader.nextWithin(System.currentTimeMillis(), 2000L)) {
          out += key(reader.get().copy())
          n += 1
        }
        (out.result(), reader.getOffset.asInstanceOf[JournalsReached])
      } finally reader.close()
    }
    // Producer 0's commit holds four rows: the batch ends after two of them.
    val (first, cut) = batch(0L, Nil, Some(2))
    assert(first == expected.take(2))
    // The next ends right after producer 2's OUTSIDE_TXN message, which its later transaction
    // must not commit again.
    val (second, outside) = batch(cut.positions(journal).offset, cut.producers(journal), Some(3))
    assert(second == expected.slice(2, 5))
    val (rest, end) = batch(outside.positions(journal).offset, outside.producers(journal), None)
    assert(first ++ second ++ rest == expected)
    val (none, again) = batch(end.positions(journal).offset, end.producers(journal), None)
    assert(none.isEmpty && again.positions(journal).offset == end.positions(journal).offset)
    // Read uncommitted: every message as read, ACKs included, and no producers' states.
    val uncommitted = config.copy(options = options.copy(readCommitted = false))
    val (all, reached) = batch(0L, Nil, None, uncommitted)
    assert(all == Judge.read(cluster.broker, journal, committed = false).map(r => (r.journal, r.begin, r.end, r.uuid)))
    assert(reached.positions(journal).offset == end.positions(journal).offset && reached.producers(journal).isEmpty)
  }

  test("options that limit micro-batches are refused in real-time mode, naming the option") {
    val journal = "source/real-time-limits/part-000"
    Journals.create(client, Journals.spec(journal))
    val options = Map("broker" -> cluster.broker, "journals" -> journal, "startingOffsets" -> "earliest")
    val limited = Seq(
      Map("maxBytesPerTrigger" -> "1000") -> "maxBytesPerTrigger",
      Map("minBytesPerTrigger" -> "1000", "maxTriggerDelay" -> "1s") -> "maxTriggerDelay",
      Map("minPartitions" -> "2") -> "minPartitions"
    )
    for ((limits, named) <- limited) {
      val q = start(options ++ limits, Files.createTempDirectory("gazette-rtm-limits").toString)
      try {
        val e = intercept[Exception](q.awaitTermination(20000))
        assert(e.getMessage.contains("GAZETTE_UNSUPPORTED_TRIGGER") && e.getMessage.contains(s"'$named'"),
          e.getMessage)
      } finally q.stop()
    }
  }

  test("a replay's reads are closed once the replay is done, not when the task ends") {
    val journal = "source/real-time-replays/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    try w.continue(0).continue(0).continue(0).continue(0).ack(0).continue(1).continue(1).continue(1).ack(1).sync()
    finally w.close()
    val reader = realTimeReader(Seq(journal), Map("sequencerRingSize" -> "2"))
    try {
      assert(drain(reader, 2000).size == 7)
      assert(reader.openReplays == 0, s"${reader.openReplays} replay reads still open")
    } finally reader.close()
  }

  test("a real-time task takes the producers' states when asked where it stands, not at every ACK") {
    val journal = "source/real-time-snapshots/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    try {
      (0 until 40).foreach(i => w.continue(i % 7).ack(i % 7))
      w.continue(9).sync()
    } finally w.close()
    val reader = realTimeReader(Seq(journal))
    try {
      assert(drain(reader, 2000).size == 40)
      assert(reader.snapshots == 0, s"${reader.snapshots} snapshots taken before the batch's end")
      val at = reached(reader)
      assert(reader.snapshots == 1)
      assert(at.positions(journal).offset == client.writeHead(journal))
      assert(at.producers(journal).size == 8 && at.producers(journal).count(_.begin != -1) == 1)
    } finally reader.close()
  }

  test("the producers' states a real-time batch's offset carries are pruned by producerPruneHorizon") {
    val journal = "source/real-time-prune/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    val t0 = System.currentTimeMillis() - 3L * 24 * 3600 * 1000
    // Producers 1 and 2 were last heard of two days before producer 0; 2's transaction is still open.
    try w.clock(t0).commit(1).continue(2).clock(t0 + 2L * 24 * 3600 * 1000).commit(0).sync()
    finally w.close()
    val reader = realTimeReader(Seq(journal))
    try {
      assert(drain(reader, 2000).size == 2)
      val producers = reached(reader).producers(journal)
      assert(producers.size == 2 && producers.count(_.begin != -1) == 1, producers)
    } finally reader.close()
  }

  test("a real-time task reads ahead of its rows at most a few MiB, however large the messages") {
    val journal = "source/real-time-large/part-000"
    Journals.create(client, Journals.spec(journal, fragmentLength = 64L << 20))
    val line = ("{\"pad\":\"" + "x" * (256 << 10) + "\"}\n").getBytes("UTF-8")
    (0 until 48).foreach(_ => client.append(journal, line))
    val reader = realTimeReader(Seq(journal))
    try {
      assert(reader.nextWithin(System.currentTimeMillis(), 10000L))
      Thread.sleep(2000)
      val limit = RealTimeJournalReader.readAheadBytes(readerConfig(Seq(journal)).options)
      assert(limit <= (8L << 20))
      assert(reader.readAhead <= limit + line.length, s"${reader.readAhead} bytes read ahead, for a limit of $limit")
      // Every message, the last too: a message is framed as soon as its last bytes are read.
      assert(drain(reader, 3000).size == 47)
    } finally reader.close()
  }

  test("each real-time batch's progress reports its tasks' metrics (Spark shows none of a real-time reader's)") {
    val journal = "source/real-time-metrics/part-000"
    Journals.create(client, Journals.spec(journal))
    Judge.publishEvents(cluster.broker, journal, 300, seed = 11L)
    val expected = Judge.read(cluster.broker, journal).size
    val head = client.writeHead(journal)
    written.clear()
    val q = start(
      Map("broker" -> cluster.broker, "journals" -> journal, "startingOffsets" -> "earliest"),
      Files.createTempDirectory("gazette-rtm-metrics").toString,
      batch = "1 second"
    )
    // Summed over the batches that ended: each batch's progress holds its own tasks' counts.
    def metric(name: String): Long =
      q.recentProgress.flatMap(_.sources.headOption).flatMap(s => Option(s.metrics.get(name))).map(_.toLong).sum
    try {
      await("every message") {
        q.exception.foreach(e => fail(s"${collected.size} of $expected", e)); collected.size >= expected
      }
      await("the batches that emitted them to end", timeoutMs = 30000)(
        metric(SourceMetrics.MessagesEmitted) >= expected)
      assert(metric(SourceMetrics.MessagesEmitted) == expected)
      // The read-ahead a batch's end leaves unread is read again by the next batch.
      assert(metric(SourceMetrics.BytesRead) >= head)
    } finally q.stop()
  }

  test("each real-time batch's progress reports the newest message's age and the time behind the heads") {
    val Hour = 3600000L
    val journal = "source/real-time-time-behind/part-000"
    Journals.create(client, Journals.spec(journal))
    val now = System.currentTimeMillis()
    val w = Judge.script(cluster.broker, journal)
    try { w.clock(now - Hour); (0 until 3).foreach(_ => w.commit(0)); w.sync() }
    finally w.close()
    written.clear()
    val q = start(
      Map("broker" -> cluster.broker, "journals" -> journal, "startingOffsets" -> "earliest"),
      Files.createTempDirectory("gazette-rtm-time-behind").toString,
      batch = "1 second"
    )
    def reported = q.recentProgress.flatMap(_.sources.headOption).map(_.metrics.asScala.toMap)
      .filter(_.contains("newestMessageAgeMs"))
    def near(metric: String, m: Map[String, String]) =
      assert(m(metric).toLong >= Hour && m(metric).toLong <= System.currentTimeMillis() - now + Hour, s"$metric: $m")
    try {
      await("a batch that read the messages to the end", timeoutMs = 30000) {
        q.exception.foreach(e => fail("the query failed", e)); reported.exists(_("bytesBehindHead") == "0")
      }
      reported.foreach(near("newestMessageAgeMs", _))
      // A batch whose time was up before it read every message is behind by the first one it left.
      reported.filter(_("bytesBehindHead") != "0").foreach(near("maxTimeBehindHeadMs", _))
      assert(reported.filter(_("bytesBehindHead") == "0").forall(_("maxTimeBehindHeadMs") == "0"), reported)
      assert(reported.forall(_("journalsTimeBehindUnknown") == "0"), reported)
    } finally q.stop()
  }

  test("a journal suspended during a real-time batch is waited for, and read again once an append resumes it") {
    val journal = "source/real-time-suspended/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    try {
      w.commit(0).sync()
      val reader = realTimeReader(Seq(journal))
      try {
        assert(drain(reader, 2000).size == 1)
        val head = client.writeHead(journal)
        suspend(journal)
        assert(readFor(reader, 5000).isEmpty)
        assert(reached(reader).positions(journal).offset == head)
        w.commit(0).sync() // an append resumes the journal
        assert(reader.nextWithin(System.currentTimeMillis(), 20000L))
        assert(rowKey(reader.get())._2 == head)
      } finally reader.close()
    } finally w.close()
  }

  test("a journal suspended when a real-time batch begins is read in that batch once an append resumes it") {
    val journal = "source/real-time-suspended-at-start/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    val options = Map("broker" -> cluster.broker, "journals" -> journal, "startingOffsets" -> "latest")
    written.clear()
    try {
      w.commit(0).sync()
      val head = client.writeHead(journal)
      suspend(journal)
      val q = start(options, Files.createTempDirectory("gazette-rtm-suspended").toString, batch = "60 seconds")
      try {
        Thread.sleep(3000)
        w.commit(0).sync() // an append resumes the journal
        await("the message appended after resuming, within the batch", timeoutMs = 30000)(collected.nonEmpty)
        assert(batchesDone(q) == 0)
        assert(collected.map(_._2) == Seq(head))
      } finally q.stop()
    } finally w.close()
  }

  test("a journal deleted during a real-time batch follows failOnDataLoss; the task's other journals are read on") {
    for (failOnDataLoss <- Seq(true, false)) {
      val gone = s"source/real-time-deleted-$failOnDataLoss/part-000"
      val other = s"source/real-time-deleted-$failOnDataLoss/part-001"
      Journals.create(client, Journals.spec(gone), Journals.spec(other))
      val w = Judge.script(cluster.broker, gone)
      val o = Judge.script(cluster.broker, other)
      try {
        w.commit(0).sync(); w.close()
        o.commit(0).sync()
        val reader = realTimeReader(Seq(gone, other), Map("failOnDataLoss" -> failOnDataLoss.toString))
        try {
          assert(drain(reader, 2000).size == 2)
          val readTo = reached(reader).positions(gone).offset
          client.apply(Seq(ApplyRequest.Change(expectModRevision = -1, delete = gone)))
          if (failOnDataLoss) {
            val e = intercept[Exception](readFor(reader, 30000))
            assert(e.getMessage.contains(s"Data loss in journal $gone"), e.getMessage)
          } else {
            val rows = readFor(reader, 10000)
            o.commit(0).sync()
            val more = rows ++ readFor(reader, 3000)
            assert(more.map(_._1) == Seq(other))
            assert(reached(reader).positions(gone).offset == readTo)
          }
        } finally reader.close()
      } finally o.close()
    }
  }

  test("a real-time batch restarts a journal whose write head went back, as micro-batches do, or fails") {
    val journal = "source/real-time-went-back/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    try w.commit(0).commit(0).sync()
    finally w.close()
    val head = client.writeHead(journal)
    val revision = client.list(s"name=$journal").head.createRevision
    // Where the offsets say the query stands: past the journal's head, which went back since.
    val start = JournalOffsets(Map(journal -> JournalPosition(head + 1000, revision, 0L)))
    def stream(failOnDataLoss: Boolean) = new GazetteMicroBatchStream(
      SourceOptions.parse(
        new CaseInsensitiveStringMap(Map("broker" -> cluster.broker, "journals" -> journal,
            "retryTimeout" -> "500ms", "failOnDataLoss" -> failOnDataLoss.toString).asJava),
        streaming = true
      ),
      Files.createTempDirectory("gazette-rtm-went-back").toString,
      new SerializableConfiguration(spark.sparkContext.hadoopConfiguration),
      RowShape(MessageToRow.schema(false).fieldNames.toSeq)
    )
    val failing = stream(failOnDataLoss = true)
    try {
      // A head behind is waited for first: it may be a broker taking the journal over.
      val waiting = failing.planRealTime(start)
      assert(waiting.flatMap(_.asInstanceOf[RealTimeTask].journals).map(_.range.start).toSeq == Seq(head + 1000))
      Thread.sleep(2000)
      failing.mergeReached(Nil) // the next batch, from the same start
      val e = intercept[Exception](failing.planRealTime(start))
      assert(e.getMessage.contains(s"Data loss in journal $journal"), e.getMessage)
    } finally failing.stop()
    val restarting = stream(failOnDataLoss = false)
    try {
      restarting.planRealTime(start)
      Thread.sleep(2000)
      restarting.mergeReached(Nil)
      val tasks = restarting.planRealTime(start)
      val ranges = tasks.flatMap(_.asInstanceOf[RealTimeTask].journals).map(_.range).toSeq
      assert(ranges.map(r => (r.start, r.origin)) == Seq((head, head)))
      assert(restarting.metrics(java.util.Optional.empty()).get("journalsRestarted") == "1")
      // Created again (its fragments in another store, so that it does not continue the old offsets).
      client.apply(Seq(ApplyRequest.Change(expectModRevision = -1, delete = journal)))
      Files.createDirectories(java.nio.file.Paths.get(cluster.fragmentRoot, "again"))
      Journals.create(client, Journals.spec(journal, store = "file:///again/"))
      restarting.mergeReached(Nil)
      val again = restarting.planRealTime(start).flatMap(_.asInstanceOf[RealTimeTask].journals).toSeq
      assert(again.map(j => (j.range.start, j.range.revision)) ==
        Seq((0L, client.list(s"name=$journal").head.createRevision)))
      assert(restarting.metrics(java.util.Optional.empty()).get("journalsRestarted") == "2")
    } finally restarting.stop()
  }

  test("a real-time batch is planned once however often Spark asks for its partitions, and anew once it ends") {
    val (a, b) = ("source/planned-once/part-000", "source/planned-once/part-001")
    Journals.create(client, Journals.spec(a, labels = Seq("app" -> "planned-once")))
    val stream = new GazetteMicroBatchStream(
      SourceOptions.parse(new CaseInsensitiveStringMap(Map("broker" -> cluster.broker, "selector" -> "app=planned-once",
            "realTimePartitions" -> "2").asJava),
        streaming = true),
      Files.createTempDirectory("gazette-rtm-planned-once").toString,
      new SerializableConfiguration(spark.sparkContext.hadoopConfiguration),
      RowShape(MessageToRow.schema(false).fieldNames.toSeq)
    )
    def journals(tasks: Array[InputPartition]) =
      tasks.flatMap(_.asInstanceOf[RealTimeTask].journals).map(_.range.journal).toSet
    try {
      val start = JournalOffsets(Map(a -> JournalPosition(0L, client.list(s"name=$a").head.createRevision, 0L)))
      val first = stream.planRealTime(start)
      Journals.create(client, Journals.spec(b, labels = Seq("app" -> "planned-once")))
      // Spark's planner asks each copy of the scan: the batch's tasks stay the ones first planned,
      // whatever was created meanwhile (the brokers are not asked again while no task reads).
      assert(stream.planRealTime(start) eq first)
      assert(journals(stream.planRealTime(start)) == Set(a))
      stream.mergeReached(Nil)
      assert(journals(stream.planRealTime(start)) == Set(a, b))
    } finally stream.stop()
  }

  test("a real-time batch is planned from the journals and heads asked as the batch before ended, unless they " +
    "were asked for other journals or were not asked") {
    val (a, b, c) = ("source/ahead/part-000", "source/ahead/part-001", "source/ahead/part-002")
    def create(j: String) = Journals.create(client, Journals.spec(j, labels = Seq("app" -> "ahead")))
    create(a)
    val directory = new JournalDirectory(client, JournalTarget.BySelector("app=ahead"))
    try {
      val ahead = new PlanningAhead(directory)
      ahead.start(Set(a))
      Thread.sleep(2000) // the local broker answers in milliseconds
      create(b)
      val asked = ahead.answers(Set(a))
      assert(asked.journals.keySet == Set(a) && asked.heads == Map(a -> client.writeHead(a)))
      // Taken once: the next batch asks anew.
      assert(ahead.answers(Set(a)).journals.keySet == Set(a, b))
      ahead.start(Set(a))
      Thread.sleep(2000)
      create(c)
      val other = ahead.answers(Set(a, b))
      assert(other.journals.keySet == Set(a, b, c) && other.heads.keySet == Set(a, b))
    } finally directory.close()
  }
}

object RealTimeSourceIntegrationSuite {
  type Key = (String, Long, Long, String)

  // (batch, partition) -> its rows; the foreach sink runs in this JVM (local master).
  val written = new ConcurrentHashMap[(Long, Long), ConcurrentLinkedQueue[Key]]()

  final class Collect extends ForeachWriter[Row] {
    private var rows: ConcurrentLinkedQueue[Key] = _

    override def open(partitionId: Long, epochId: Long): Boolean = {
      rows = new ConcurrentLinkedQueue[Key]()
      written.put((epochId, partitionId), rows)
      true
    }

    override def process(r: Row): Unit =
      rows.add((r.getString(0), r.getLong(1), r.getLong(2), Option(r.getString(3)).getOrElse("")))

    override def close(errorOrNull: Throwable): Unit = ()
  }
}
