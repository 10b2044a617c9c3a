package io.sparkgazette.spark
package source

import java.io.ByteArrayOutputStream
import java.nio.file.attribute.FileTime
import java.nio.file.{Files, Paths}
import java.time.Instant

import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString
import io.sparkgazette.message.{Clock, CsvFraming, Flags, ProducerId, Uuid}
import io.sparkgazette.spark.source.progress.JournalLag
import io.sparkgazette.testing.{Journals, Judge, JudgeScript, SparkClusterSuite}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

/** Time behind the journals' heads, and the newest message's age, against a real broker, from
  * messages whose producers' clocks the test chooses (Gazette's own Publisher) and from fragment
  * times where messages have no UUID: [[JournalLag.timeBehind]] itself, and the metrics of each
  * trigger's progress.
  */
class SourceTimeBehindIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  private val Hour = 3600000L

  // Publishes `n` committed messages at `clock` (epoch ms); returns the offset the first begins at.
  private def publish(w: JudgeScript, journal: String, clock: Long, n: Int): Long = {
    val begin = client.writeHead(journal)
    w.clock(clock)
    (0 until n).foreach(_ => w.commit(0))
    w.sync()
    begin
  }

  private def await(what: String, timeoutMs: Long = 30000)(done: => Boolean): Unit = {
    val deadline = System.currentTimeMillis() + timeoutMs
    while (!done) {
      if (System.currentTimeMillis() > deadline) fail(s"timed out waiting for $what")
      Thread.sleep(100)
    }
  }

  // Messages without UUIDs, appended ten at a time: fragments of 1 KiB roll, and are persisted, as appends pass them.
  private def publishWithoutUuids(journal: String, appends: Int = 6): Unit = {
    val w = Judge.script(cluster.broker, journal)
    try { (0 until appends).foreach { _ => (0 until 10).foreach(_ => w.noUuid()); w.sync() } }
    finally w.close()
  }

  // Moves the store's files of `journal` back to `epochMillis`, and waits until its broker lists them so.
  private def persistedAt(journal: String, epochMillis: Long): Unit = {
    await("persisted fragments")(client.listFragments(journal).flatMap(_.spec).exists(_.modTime > 0))
    val files = Files.walk(Paths.get(cluster.fragmentRoot, journal)).iterator().asScala.filter(Files.isRegularFile(_))
    files.foreach(f => Files.setLastModifiedTime(f, FileTime.fromMillis(epochMillis)))
    await("the store's listing of the moved fragments")(
      client.listFragments(journal).flatMap(_.spec).filter(_.modTime > 0).forall(_.modTime == epochMillis / 1000))
  }

  test("timeBehind is the age of the first message at or after the offset, by its UUID's clock; 0 at the head") {
    val journal = "time-behind/uuids/part-000"
    Journals.create(client, Journals.spec(journal))
    val now = System.currentTimeMillis()
    val w = Judge.script(cluster.broker, journal)
    val second =
      try { publish(w, journal, now - Hour, 3); publish(w, journal, now - Hour / 2, 3) }
      finally w.close()
    val head = client.writeHead(journal)
    def behind(offset: Long, at: Long = now) = JournalLag.timeBehind(client, journal, offset, head, at)
    def near(ms: Long)(found: Option[Long]) = found.exists(f => math.abs(f - ms) < 1000)
    assert(near(Hour)(behind(0)), behind(0))
    assert(near(Hour / 2)(behind(second)), behind(second))
    // Inside a message (a capped batch ends anywhere): the next whole message tells.
    assert(near(Hour / 2)(behind(second + 1)), behind(second + 1))
    assert(behind(head) == Some(0L))
    assert(behind(head + 100) == Some(0L))
    // A driver whose clock is behind the producers' sees no age, not a negative one.
    assert(behind(0, at = now - 2 * Hour) == Some(0L))
  }

  test("timeBehind of messages without a UUID is a lower bound from their persisted fragment's time, else unknown") {
    val journal = "time-behind/no-uuids/part-000"
    Journals.create(client, Journals.spec(journal, fragmentLength = 1024))
    publishWithoutUuids(journal)
    val head = client.writeHead(journal)
    val anHourAgo = (System.currentTimeMillis() - Hour) / 1000 * 1000
    persistedAt(journal, anHourAgo)
    val now = System.currentTimeMillis()
    val found = JournalLag.timeBehind(client, journal, 0, head, now)
    // The fragment was persisted within the second its mod_time names: at least that long ago, less a second.
    assert(found.exists(ms => ms <= now - anHourAgo && ms >= now - anHourAgo - 1000), found)
    // Bytes only in a broker's spool have no fragment time yet.
    val spooled = "time-behind/no-uuids-spooled/part-000"
    Journals.create(client, Journals.spec(spooled))
    val s = Judge.script(cluster.broker, spooled)
    try { (0 until 3).foreach(_ => s.noUuid()); s.sync() }
    finally s.close()
    assert(JournalLag.timeBehind(client, spooled, 0, client.writeHead(spooled), now) == None)
  }

  // Each batch's source metrics of an AvailableNow run of `journal` from offset `from`.
  private def progress(journal: String, maxBytesPerTrigger: Long, from: Long = 0L): Seq[Map[String, String]] = {
    val q = spark.readStream.format("gazette").option("broker", cluster.broker).option("journals", journal)
      .option("startingOffsets", s"""{"$journal": $from}""")
      .option("maxBytesPerTrigger", maxBytesPerTrigger.toString).load()
      .writeStream.option("checkpointLocation", Files.createTempDirectory("gazette-ckpt").toString)
      .trigger(Trigger.AvailableNow()).foreachBatch { (df: DataFrame, _: Long) => df.count(); () }.start()
    try assert(q.awaitTermination(60000), "the query did not finish")
    finally q.stop()
    q.recentProgress.toSeq.filter(_.numInputRows > 0).map(_.sources.head.metrics.asScala.toMap)
  }

  test("each trigger reports the newest message's age and the time behind the heads, by the messages' clocks") {
    val journal = "time-behind/progress/part-000"
    Journals.create(client, Journals.spec(journal))
    val now = System.currentTimeMillis()
    val w = Judge.script(cluster.broker, journal)
    val second =
      try { publish(w, journal, now - Hour, 3); publish(w, journal, now - Hour / 2, 3) }
      finally w.close()
    // The first batch reads the messages of an hour ago, the second those of half an hour ago.
    val batches = progress(journal, maxBytesPerTrigger = second)
    val elapsed = System.currentTimeMillis() - now
    def within(ms: Long)(metric: String, m: Map[String, String]) =
      assert(m.get(metric).map(_.toLong).exists(v => v >= ms && v <= ms + elapsed), s"$metric of $ms ms: $m")
    assert(batches.size == 2, batches)
    Seq("minTimeBehindHeadMs", "avgTimeBehindHeadMs", "maxTimeBehindHeadMs").foreach { metric =>
      within(Hour / 2)(metric, batches(0))
      assert(batches(1)(metric) == "0", batches(1))
    }
    within(Hour)("newestMessageAgeMs", batches(0))
    within(Hour / 2)("newestMessageAgeMs", batches(1))
    assert(batches.forall(_("journalsTimeBehindUnknown") == "0"), batches)
  }

  test("a trigger behind messages without UUIDs reports the time of their persisted fragment, and no message age") {
    val journal = "time-behind/progress-no-uuids/part-000"
    Journals.create(client, Journals.spec(journal, fragmentLength = 1024))
    publishWithoutUuids(journal)
    val anHourAgo = (System.currentTimeMillis() - Hour) / 1000 * 1000
    persistedAt(journal, anHourAgo)
    val f = client.listFragments(journal).flatMap(_.spec).filter(_.modTime > 0).maxBy(f => f.end - f.begin)
    assert(f.end - f.begin >= 1024, f)
    // The first batch ends in the middle of a fragment persisted an hour ago.
    val batches = progress(journal, maxBytesPerTrigger = (f.end - f.begin) / 2, from = f.begin)
    val elapsed = System.currentTimeMillis() - anHourAgo
    val behind = batches.head.get("maxTimeBehindHeadMs").map(_.toLong)
    assert(behind.exists(ms => ms >= Hour - 1000 && ms <= elapsed), batches.head)
    assert(batches.forall(!_.contains("newestMessageAgeMs")), batches)
    assert(batches.last("maxTimeBehindHeadMs") == "0", batches.last)
  }

  test("time behind, asked from inside a CSV record, is the next record's age") {
    val journal = "time-behind/csv/part-000"
    Journals.create(client, Journals.spec(journal, labels = Seq("content-type" -> "text/csv")))
    val producer = ProducerId.random()
    val now = System.currentTimeMillis()
    // Records `<uuid>,x,y,z`, committed one by one at `clock` (epoch ms); where the first begins.
    def publish(clock: Long, n: Int): Long = {
      val begin = client.writeHead(journal)
      val out = new ByteArrayOutputStream()
      (0 until n).foreach { i =>
        val c = Clock.fromInstant(Instant.ofEpochMilli(clock)) + (i.toLong << 4)
        CsvFraming.frame("x,y,z".getBytes("UTF-8"), Uuid.build(producer, c, Flags.OutsideTxn), out)
      }
      client.append(journal, ByteString.copyFrom(out.toByteArray))
      begin
    }
    publish(now - Hour, 3)
    val second = publish(now - Hour / 2, 3)
    val head = client.writeHead(journal)
    def behind(offset: Long) = JournalLag.timeBehind(client, journal, offset, head, now)
    def near(ms: Long)(found: Option[Long]) = found.exists(f => math.abs(f - ms) < 1000)
    assert(near(Hour / 2)(behind(second)), behind(second))
    // A capped batch ends anywhere: here inside the record's fields (`y,z` of `<uuid>,x,y,z`).
    val inside = second + 36 + 3
    assert(near(Hour / 2)(behind(inside)), behind(inside))
  }

  test("time behind an acknowledgement a recovering producer writes again is its writing's age, not its clock's") {
    val journal = "time-behind/recovered-ack/part-000"
    Journals.create(client, Journals.spec(journal))
    val producer = ProducerId.random()
    val now = System.currentTimeMillis()
    val anHourAgo = Clock.fromInstant(Instant.ofEpochMilli(now - Hour))
    def line(clock: Long, flags: Int, body: String) =
      s"""{"_meta":{"uuid":"${Uuid.build(producer, clock, flags)}"}$body}\n"""
    // A transaction committed an hour ago: its message and its acknowledgement.
    client.append(journal,
      ByteString.copyFromUtf8(line(anHourAgo, Flags.ContinueTxn, ""","n":1""") +
        line(anHourAgo + 16, Flags.AckTxn, "")))
    val read = client.writeHead(journal)
    // Now the producer (a consumer shard) recovers from that transaction's checkpoint and writes its
    // acknowledgement again, as Gazette's consumers do: the bytes are new, the clock an hour old.
    client.append(journal, ByteString.copyFromUtf8(line(anHourAgo + 16, Flags.AckTxn, "")))
    def behind() = JournalLag.timeBehind(client, journal, read, client.writeHead(journal), System.currentTimeMillis())
    // Behind that acknowledgement only, nothing tells when it was written but its fragment, not persisted yet.
    assert(
      behind().forall(_ < 60000L), s"a reader behind only an acknowledgement written just now is ${behind()} ms behind")
    // A message the producer publishes next is timed by its clock.
    client.append(
      journal, ByteString.copyFromUtf8(line(Clock.fromInstant(Instant.now()), Flags.OutsideTxn, ""","n":2""")))
    assert(behind().exists(_ < 60000L),
      s"a reader behind an acknowledgement written again and a new message is ${behind()} ms behind")
  }
}
