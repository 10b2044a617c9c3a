package io.sparkgazette.spark
package source

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}
import java.time.Instant
import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import io.sparkgazette.message.{Flags, Framing, ProducerId, Uuid}
import io.sparkgazette.spark.source.offsets.JournalOffsets
import io.sparkgazette.spark.source.planning.OffsetsForTimes
import io.sparkgazette.testing.{Journals, Judge, JudgeScript, SparkClusterSuite}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/** Starting and ending by time against a real broker: each answer is the first message whose UUID
  * clock is at or after the time, judged by what Gazette's own ReadCommittedIter reads from there.
  */
class SourceTimestampsIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  private type Key = (String, Long, Long, String)

  // The judge's producers start at this clock; fragments are persisted now, hours later.
  private val t0 = Instant.parse("2026-11-22T12:00:00Z").toEpochMilli
  private def minutes(n: Int): Long = t0 + n * 60000L

  private def script(journal: String, fragmentLength: Long = 1 << 20): JudgeScript = {
    Journals.create(client, Journals.spec(journal, fragmentLength = fragmentLength))
    Judge.script(cluster.broker, journal)
  }

  /** Publishes `n` committed messages at `clock` (epoch ms) and returns the offset the first one begins at. */
  private def publish(w: JudgeScript, journal: String, clock: Long, n: Int): Long = {
    val begin = client.writeHead(journal)
    w.clock(clock)
    (0 until n).foreach(_ => w.commit(0))
    w.sync()
    begin
  }

  private def expected(journal: String, from: Long = 0L, until: Long = Long.MaxValue): Seq[Key] =
    Judge.read(
      cluster.broker, journal).map(r => (r.journal, r.begin, r.end, r.uuid)).filter(k => k._2 >= from && k._3 <= until)

  private def keys(df: DataFrame): Seq[Key] =
    df.select("journal", "begin", "end", "uuid").collect().toSeq
      .map(r => (r.getString(0), r.getLong(1), r.getLong(2), Option(r.getString(3)).getOrElse("")))

  private def batch(options: (String, String)*): Seq[Key] =
    keys(spark.read.format("gazette").option("broker", cluster.broker).options(options.toMap).load()).sortBy(k =>
      (k._1, k._2))

  private def start(options: Map[String, String], checkpoint: String)(each: (DataFrame, Long) => Any): StreamingQuery =
    spark.readStream.format("gazette").option("broker", cluster.broker).options(options).load()
      .writeStream.option("checkpointLocation", checkpoint).trigger(Trigger.AvailableNow())
      .foreachBatch { (df: DataFrame, id: Long) => each(df, id); () }
      .start()

  private def run(options: Map[String, String], checkpoint: String): Seq[Key] = {
    val rows = new ConcurrentHashMap[Long, Seq[Key]]()
    val q = start(options, checkpoint)((df, id) => rows.put(id, keys(df)))
    try assert(q.awaitTermination(60000), "the query did not finish")
    finally q.stop()
    rows.asScala.toSeq.sortBy(_._1).flatMap(_._2).sortBy(k => (k._1, k._2))
  }

  private def checkpoint(): String = Files.createTempDirectory("gazette-ckpt").toString

  private def initialOffsets(ckpt: String): JournalOffsets =
    JournalOffsets.fromJson(new String(Files.readAllBytes(Paths.get(ckpt, "sources", "0", "sequencer",
            "initial-offsets.json")), UTF_8))

  test(
    "a stream starting at a time between two batches reads exactly the second; the offsets found are kept for restarts") {
    val journal = "times/between/part-000"
    val w = script(journal)
    try {
      publish(w, journal, minutes(0), 5)
      val second = publish(w, journal, minutes(10), 4)
      val ckpt = checkpoint()
      // Planned, never read: the restart below must plan the same first batch, whatever its options now say.
      val q = start(Map("journals" -> journal, "startingTimestamp" -> minutes(5).toString), ckpt)((_, _) =>
        throw new IllegalStateException("planned, never read"))
      intercept[Exception](q.awaitTermination(60000))
      assert(initialOffsets(ckpt)(journal) == second)
      val rows = run(Map("journals" -> journal, "startingTimestamp" -> "0"), ckpt)
      assert(rows == expected(journal, from = second) && rows.size == 4)
      val third = publish(w, journal, minutes(20), 2)
      assert(run(Map("journals" -> journal, "startingTimestamp" -> "0"), ckpt) == expected(journal, from = third))
    } finally w.close()
  }

  test(
    "a message exactly at the time is the first read; clocks that go back across producers do not end the search early") {
    val journal = "times/exact/part-000"
    val w = script(journal)
    try {
      publish(w, journal, minutes(0), 2)
      // Producers whose clocks disagree: one at minute 30, then one at minute 5, then one at minute 40.
      def line(producer: Long, at: Long) =
        s"""{"_meta":{"uuid":"${Uuid.build(
            ProducerId(producer), OffsetsForTimes.clockAt(at), Flags.OutsideTxn)}"}}\n""".getBytes(UTF_8)
      val ahead = client.writeHead(journal)
      w.raw(line(0x010000000001L, minutes(30))).raw(line(0x010000000002L, minutes(5))).sync()
      val last = client.writeHead(journal)
      w.raw(line(0x010000000003L, minutes(40))).sync()
      def from(time: Long) = batch("journals" -> journal, "startingTimestamp" -> time.toString).map(_._2)
      val all = expected(journal).map(_._2)
      // Minute 10: the message of minute 30 is the first at or after it; the one of minute 5 after it is read.
      assert(from(minutes(10)) == all.filter(_ >= ahead) && all.filter(_ >= ahead).size == 3)
      assert(from(minutes(30)) == all.filter(_ >= ahead), "a clock exactly at the time")
      assert(
        from(minutes(30) + 1) == Seq(last), "the message of minute 5 is before the time, the search goes on past it")
      assert(batch("journals" -> journal, "startingTimestamp" -> (minutes(40) + 1).toString,
          "startingOffsetsByTimestampStrategy" -> "latest").isEmpty)
    } finally w.close()
  }

  test("a time per journal; journals the JSON leaves out start at their earliest offset") {
    val (a, b) = ("times/map/part-000", "times/map/part-001")
    val wa = script(a)
    val wb = script(b)
    try {
      publish(wa, a, minutes(0), 3); publish(wb, b, minutes(0), 3)
      val secondA = publish(wa, a, minutes(10), 2); publish(wb, b, minutes(10), 2)
      val rows = batch("selector" -> "prefix=times/map/", "startingOffsetsByTimestamp" -> s"""{"$a": ${minutes(5)}}""",
        "startingOffsets" -> "latest")
      assert(rows == expected(a, from = secondA) ++ expected(b))
      val both = batch("selector" -> "prefix=times/map/", "startingOffsetsByTimestamp" -> s"""{"$a": ${minutes(5)}}""",
        "startingTimestamp" -> minutes(5).toString)
      assert(
        both.map(_._1).distinct == Seq(a, b) && both.size == 4, "startingTimestamp takes precedence, as Kafka's does")
      val e = intercept[Exception](batch("selector" -> "prefix=times/map/",
          "startingOffsetsByTimestamp" -> """{"times/nope": 1}"""))
      assert(e.getMessage.contains("'times/nope'") && e.getMessage.contains("startingOffsetsByTimestamp"), e.getMessage)
    } finally { wa.close(); wb.close() }
  }

  test("a batch between a starting and an ending time holds the messages published between them") {
    val journal = "times/ending/part-000"
    val w = script(journal)
    try {
      val first = publish(w, journal, minutes(0), 3)
      val second = publish(w, journal, minutes(10), 3)
      val third = publish(w, journal, minutes(20), 3)
      assert(batch("journals" -> journal, "endingTimestamp" -> minutes(5).toString) ==
        expected(journal, first, until = second))
      assert(batch("journals" -> journal, "startingTimestamp" -> minutes(5).toString,
        "endingTimestamp" -> minutes(15).toString) ==
        expected(journal, second, until = third))
      assert(batch("journals" -> journal, "endingOffsetsByTimestamp" -> s"""{"$journal": ${minutes(15)}}""") ==
        expected(journal, first, until = third))
      // No message at or after the ending time: the batch ends at the write head.
      assert(batch("journals" -> journal, "startingTimestamp" -> minutes(15).toString,
        "endingTimestamp" -> minutes(60).toString) ==
        expected(journal, third))
    } finally w.close()
  }

  test(
    "batches split at a time hold every committed message once: a transaction published before it, acknowledged after it") {
    val journal = "times/straddle/part-000"
    val w = script(journal)
    try {
      w.clock(minutes(0)).commit(0).continue(1).continue(1)
      w.clock(minutes(10)).ack(1).commit(0).sync()
      val before = batch("journals" -> journal, "endingTimestamp" -> minutes(5).toString)
      val after = batch("journals" -> journal, "startingTimestamp" -> minutes(5).toString)
      assert((before ++ after).sortBy(_._2) == expected(journal), s"before the time: $before; after it: $after")
      // Split at any offset, the same.
      val offsets = Judge.read(cluster.broker, journal, committed = false).map(_.end)
      offsets.foreach { at =>
        val head = batch("journals" -> journal, "endingOffsets" -> s"""{"$journal": $at}""")
        val tail = batch("journals" -> journal, "startingOffsets" -> s"""{"$journal": $at}""")
        assert((head ++ tail).sortBy(_._2) == expected(journal), s"split at $at: $head, then $tail")
      }
    } finally w.close()
  }

  test("no message at or after the time: an error naming journal and time, or with 'latest' the write head") {
    val journal = "times/none/part-000"
    val w = script(journal)
    try {
      publish(w, journal, minutes(0), 3)
      val late = minutes(60).toString
      val e = intercept[Exception](batch("journals" -> journal, "startingTimestamp" -> late))
      assert(
        e.getMessage.contains(s"Journal $journal has no message published at or after 2026-11-22T13:00:00Z") &&
          e.getMessage.contains("startingOffsetsByTimestampStrategy"),
        e.getMessage
      )
      val s = intercept[Exception](run(Map("journals" -> journal, "startingTimestamp" -> late), checkpoint()))
      assert(s.getMessage.contains(s"Journal $journal has no message"), s.getMessage)
      assert(batch("journals" -> journal, "startingTimestamp" -> late,
          "startingOffsetsByTimestampStrategy" -> "latest").isEmpty)
      val ckpt = checkpoint()
      val opts =
        Map("journals" -> journal, "startingTimestamp" -> late, "startingOffsetsByTimestampStrategy" -> "latest")
      assert(run(opts, ckpt).isEmpty)
      val next = publish(w, journal, minutes(1), 1) // a clock before the time, yet after the start: read
      assert(run(opts, ckpt) == expected(journal, from = next))
    } finally w.close()
  }

  test("fragments persisted before the time are skipped; the answer is exact, and a message boundary") {
    val journal = "times/fragments/part-000"
    // Small fragments: each append rolls the one before it, which is then persisted.
    val w = script(journal, fragmentLength = 1024)
    try {
      val now = System.currentTimeMillis()
      (0 until 4).foreach(i => publish(w, journal, now + i, 12))
      val deadline = System.currentTimeMillis() + 60000
      def persisted = client.listFragments(journal).flatMap(_.spec).filter(_.modTime != 0)
      while (persisted.size < 3 && System.currentTimeMillis() < deadline) Thread.sleep(200)
      assert(persisted.size >= 3, s"fragments were not persisted: ${client.listFragments(journal).flatMap(_.spec)}")
      Thread.sleep(math.max(0L, (persisted.map(_.modTime).max + 2) * 1000L - System.currentTimeMillis()))
      val time = System.currentTimeMillis()
      val second = publish(w, journal, time + 1, 5)
      val framing = Framing.forContentType(Framing.JsonLines).toOption.get
      val fragments =
        client.listFragments(journal).flatMap(_.spec).map(f => OffsetsForTimes.FragmentTime(f.begin, f.end, f.modTime))
      val from = OffsetsForTimes.searchFrom(fragments, time, slackMillis = 0).get
      assert(from > 0 && from <= second, s"nothing was skipped: $fragments")
      assert(OffsetsForTimes.find(client, journal, framing, time, 1 << 20, slackMillis = 0) ==
        OffsetsForTimes.AtOffset(second))
      assert(OffsetsForTimes.find(client, journal, framing, time, 1 << 20) == OffsetsForTimes.AtOffset(second))
      assert(run(Map("journals" -> journal, "startingTimestamp" -> time.toString), checkpoint()) ==
        expected(journal, from = second))
    } finally w.close()
  }
}
