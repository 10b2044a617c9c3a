package io.sparkgazette.spark
package source
package rows

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.sql.Timestamp
import java.time.Instant
import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import io.sparkgazette.message.Framing
import io.sparkgazette.spark.source.reading.SourceMetrics
import io.sparkgazette.testing.Json
import io.sparkgazette.testing.{Judge, JudgeRecord, SparkClusterSuite}
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.apache.spark.sql.streaming.Trigger
import org.apache.spark.sql.types.{LongType, StructField, StructType}
import org.apache.spark.sql.{DataFrame, Row}
import org.scalatest.funsuite.AnyFunSuite

/** Rows typed by a schema, parsed in the scan, against a real broker: each row is judged by
  * Gazette's own reader over the same journal, whose output the test parses itself.
  */
class TypedRowsIntegrationSuite extends AnyFunSuite with SparkClusterSuite with TypedJournals {
  import TypedRowsIntegrationSuite._

  private val events = "user STRING, amount INT, ts TIMESTAMP, kind STRING, seq LONG"

  /** Every message Go's reader reads, keyed by offset, as the test parses the event it prints. */
  private def judged(journal: String, skipMalformed: Boolean = false): Map[Long, Event] =
    Judge.read(cluster.broker, journal, skipMalformed = skipMalformed).map(r => r.begin -> event(r)).toMap

  private def rows(df: DataFrame): Map[Long, Event] = {
    val all = df.select("_gazette.begin", "user", "amount", "ts", "kind", "seq").collect().toSeq
    val byBegin = all.map(r => r.getLong(0) -> Event(r)).toMap
    assert(byBegin.size == all.size, "a message read twice")
    byBegin
  }

  test("ndjson events parsed in the scan are Go's reader's messages, parsed by the test, each once") {
    val j = journal("typed/events/part-000")
    Judge.publishEvents(cluster.broker, j, 300)
    val expected = judged(j)
    assert(expected.size > 100)
    val df = reader(j, events).load()
    assert(df.schema.fieldNames.toSeq == Seq("user", "amount", "ts", "kind", "seq", TypedSchema.Meta))
    assert(rows(df) == expected)
    val meta = df.select("_gazette.*").collect()
    assert(meta.map(_.getAs[String]("journal")).toSet == Set(j))
    assert(meta.forall(m => m.getAs[String]("uuid") != null && m.getAs[Array[Byte]]("value").nonEmpty))
  }

  test("a stream of typed rows reads every committed event once, as Go's reader does") {
    val j = journal("typed/stream/part-000")
    Judge.publishEvents(cluster.broker, j, 200, seed = 7L)
    val got = new ConcurrentHashMap[Long, Map[Long, Event]]()
    val q = spark.readStream.format("gazette").option("broker", cluster.broker).option("journals", j)
      .option("startingOffsets", "earliest").option("maxBytesPerTrigger", "4096").schema(events).load()
      .writeStream.option("checkpointLocation", Files.createTempDirectory("typed-ckpt").toString)
      .trigger(Trigger.AvailableNow()).foreachBatch { (df: DataFrame, id: Long) => got.put(id, rows(df)); () }.start()
    try assert(q.awaitTermination(120000), "the query did not finish")
    finally q.stop()
    assert(got.size > 1, "one batch only")
    val all = got.asScala.values.toSeq.flatMap(_.toSeq)
    assert(all.size == all.map(_._1).distinct.size, "a message in two batches")
    assert(all.toMap == judged(j))
  }

  test("a typed read committed, split into pieces sequenced from a first pass, reads every event once") {
    val j = journal("typed/split/part-000")
    Judge.publishEvents(cluster.broker, j, 40000, seed = 3L)
    assert(client.writeHead(j) > (3L << 20), "large enough for three pieces of 1 MiB")
    val df = reader(j, events, "minPartitions" -> "3", "bytesPerPartition" -> (1 << 20).toString).load()
    assert(df.rdd.getNumPartitions >= 3)
    assert(rows(df) == judged(j))
  }

  test("pruning reaches the parser: fields the query does not select are never parsed") {
    val j = journal("typed/pruned/part-000")
    val w = Judge.script(cluster.broker, j)
    try w.raw("""{"user":"a","amount":1,"seq":"not a number"}""".getBytes(UTF_8) :+ '\n'.toByte).sync()
    finally w.close()
    val df = reader(j, events).load().select("amount")
    val scan = df.queryExecution.executedPlan.collectFirst { case s: BatchScanExec => s.scan }.get
    assert(scan.readSchema().fieldNames.toSeq == Seq("amount"))
    assert(df.collect().toSeq == Seq(Row(1)))
    // With seq selected, the same message does not parse.
    val e = intercept[Exception](reader(j, events).load().select("seq").collect())
    assert(message(e).contains(s"journal $j at offset 0"), message(e))
    // The connector's struct is pruned too: only begin is built.
    val begins = reader(j, events).load().select("_gazette.begin")
    val metaScan = begins.queryExecution.executedPlan.collectFirst { case s: BatchScanExec => s.scan }.get
    assert(metaScan.readSchema() == StructType(Seq(StructField(TypedSchema.Meta,
          StructType(Seq(StructField("begin", LongType, nullable = false))), nullable = false))))
    assert(begins.collect().toSeq == Seq(Row(0L)))
  }

  private val malformedLines = Seq(
    """{"user":"a","amount":1}""",
    """{"user":"b","amount":"lots"}""", // valid JSON, not of the schema
    """{"user":"c","amount":""", // not JSON
    """{"user":"d","amount":4}"""
  )

  private def malformed(name: String): (String, Seq[Long]) = {
    val j = journal(name)
    val w = Judge.script(cluster.broker, j)
    try malformedLines.foreach(l => w.raw((l + "\n").getBytes(UTF_8)))
    finally { w.sync(); w.close() }
    (j, malformedLines.scanLeft(0L)(_ + _.length + 1).init)
  }

  test("a malformed message fails the read naming its journal and offset (failOnMalformed, the default)") {
    val (j, offsets) = malformed("typed/failing/part-000")
    val e = intercept[Exception](reader(j, "user STRING, amount INT").load().collect())
    assert(
      message(e).contains("GAZETTE_MALFORMED_MESSAGE") && message(e).contains(s"journal $j at offset ${offsets(1)}"),
      message(e))
  }

  test("failOnMalformed false skips malformed messages and counts them; the others are Go's reader's") {
    val (j, offsets) = malformed("typed/skipping/part-000")
    val df = reader(j, "user STRING, amount INT", "failOnMalformed" -> "false").load()
      .select("_gazette.begin", "user", "amount")
    val got = df.collect().map(r => (r.getLong(0), r.getString(1), r.getInt(2)))
    val scan = df.queryExecution.executedPlan.collectFirst { case s: BatchScanExec => s }.get
    assert(scan.metrics(SourceMetrics.MalformedSkipped).value == 2, "both malformed messages are counted")
    // Go's reader skips what is not JSON; the test parses the rest, and drops what is not of the schema.
    val expected = Judge.read(cluster.broker, j, committed = false, skipMalformed = true).flatMap { r =>
      val o = Json.parse(r.payload).getAsJsonObject
      val amount = o.get("amount").getAsJsonPrimitive
      if (amount.isNumber) Some((r.begin, o.get("user").getAsString, amount.getAsInt)) else None
    }
    assert(got.toSeq == expected && got.map(_._1).toSeq == Seq(offsets(0), offsets(3)))
  }

  test("with the corrupt-record column in the schema, malformed messages are rows holding their text (PERMISSIVE)") {
    val (j, offsets) = malformed("typed/permissive/part-000")
    val got = reader(j, "user STRING, amount INT, _corrupt_record STRING").load()
      .select("_gazette.begin", "user", "amount", "_corrupt_record").collect()
      .map(r => (r.getLong(0), Option(r.getString(1)), Option(r.get(2)), Option(r.getString(3)))).toSeq
    assert(got.map(_._1) == offsets)
    assert(got(0) == ((offsets(0), Some("a"), Some(1), None)))
    assert(got(1)._4.contains(malformedLines(1)) && got(1)._3.isEmpty)
    assert(got(2)._4.contains(malformedLines(2)) && got(2)._3.isEmpty)
    assert(got(3) == ((offsets(3), Some("d"), Some(4), None)))
    // A corrupt-record column of its own name, by option: selected alone, every field is still parsed;
    // pruned away, malformed messages still count as rows.
    val renamed = reader(j, "user STRING, amount INT, bad STRING", "columnNameOfCorruptRecord" -> "bad").load()
    assert(renamed.select("bad").collect().count(_.getString(0) != null) == 2)
    assert(renamed.select("user").count() == 4)
  }

  test("Spark's timestamp and date formats apply") {
    val j = journal("typed/formats/part-000")
    val w = Judge.script(cluster.broker, j)
    try w.raw("""{"ts":"22/11/2026 12:34","day":"2026.11.23"}""".getBytes(UTF_8) :+ '\n'.toByte).sync()
    finally w.close()
    val row = reader(j, "ts TIMESTAMP, day DATE", "timestampFormat" -> "dd/MM/yyyy HH:mm", "dateFormat" -> "yyyy.MM.dd",
      "timeZone" -> "UTC").load().select("ts", "day").head()
    assert(row.getTimestamp(0).toInstant == Instant.parse("2026-11-22T12:34:00Z"))
    assert(row.getDate(1).toString == "2026-11-23")
  }

  test("CSV records parsed in the scan are Go's reader's, their columns after the UUID in the schema's order") {
    val j = journal("typed/csv/part-000", Framing.Csv)
    Judge.publishRandom(cluster.broker, j, seed = 11L)
    // The judge prints the fields after the UUID joined by commas (its fields hold none); empty is null.
    val expected = Judge.read(cluster.broker, j).map { r =>
      val f = r.payload.split(",", -1).map(v => Option(v).filter(_.nonEmpty).orNull)
      (r.begin, Integer.valueOf(f(0)), f(1), f(2))
    }
    assert(expected.size > 10)
    val df = reader(j, "seq INT, producer STRING, pad STRING").load()
    val got = df.select("_gazette.begin", "seq", "producer", "pad").collect()
      .map(r => (r.getLong(0), r.getAs[Integer](1), r.getString(2), r.getString(3))).toSeq
    assert(got.sortBy(_._1) == expected.sortBy(_._1))
    // Pruned: the query that selects the producers parses no other column.
    val producers = df.select("producer")
    val scan = producers.queryExecution.executedPlan.collectFirst { case s: BatchScanExec => s.scan }.get
    assert(scan.readSchema().fieldNames.toSeq == Seq("producer"))
    assert(producers.collect().map(_.getString(0)).sorted.toSeq == expected.map(_._3).sorted)
  }

  test("CSV: Gazette's quoting (commas, doubled quotes and newlines in quoted fields); a value not of its type fails") {
    val j = journal("typed/csv-quoted/part-000", Framing.Csv)
    val records = Seq(",\"a,b\",\"say \"\"hi\"\"\",1", ",\"two\nlines\",plain,2", ",x,y,three")
    val w = Judge.script(cluster.broker, j)
    try records.foreach(r => w.raw((r + "\n").getBytes(UTF_8)))
    finally { w.sync(); w.close() }
    val offsets = records.scanLeft(0L)(_ + _.getBytes(UTF_8).length + 1).init
    assert(Judge.read(cluster.broker, j).map(_.begin) == offsets, "Go's reader reads the same records")
    val df = reader(j, "a STRING, b STRING, n INT", "failOnMalformed" -> "false").load()
    assert(df.select("_gazette.begin", "a", "b", "n").collect().toSeq ==
      Seq(Row(offsets(0), "a,b", "say \"hi\"", 1), Row(offsets(1), "two\nlines", "plain", 2)))
    val e = intercept[Exception](reader(j, "a STRING, b STRING, n INT").load().collect())
    assert(message(e).contains(s"journal $j at offset ${offsets(2)}"), message(e))
    // The corrupt-record column holds the whole record, its UUID column too.
    val corrupt = reader(j, "a STRING, b STRING, n INT, _corrupt_record STRING").load()
      .where("_corrupt_record IS NOT NULL").select("_corrupt_record").collect().map(_.getString(0)).toSeq
    assert(corrupt == Seq(records(2)))
  }

  test("CSV: a record ending in \\r\\n, with \\r\\n inside a quoted field, reads as Go's reader reads it (\\n)") {
    val j = journal("typed/csv-crlf/part-000", Framing.Csv)
    val w = Judge.script(cluster.broker, j)
    try w.raw(",\"two\r\nlines\",1\r\n".getBytes(UTF_8)).sync()
    finally w.close()
    val judged = Judge.read(cluster.broker, j).map(_.payload)
    assert(judged == Seq("two\nlines,1"), judged)
    val got = reader(j, "a STRING, n INT").load().select("a", "n").collect().map(r => (r.getString(0), r.get(1))).toSeq
    assert(got == Seq(("two\nlines", 1)), got.map { case (a, n) => (a.replace("\r", "\\r").replace("\n", "\\n"), n) })
  }

  test("ndjson: a message whose unread member Spark's parser rejects is malformed whatever that member's length") {
    // Two messages alike but for the length of "note", which holds a byte that is not UTF-8
    // (Go's reader takes both, as the framing's check does): Spark's parser rejects both whole.
    def line(pad: Int): Array[Byte] = {
      val b = s"""{"user":"${"u" * 30}$pad","amount":1,"note":"X${"x" * pad}"}\n""".getBytes(UTF_8)
      b(b.indexOf('X'.toByte)) = 0xff.toByte
      b
    }
    val j = journal("typed/bad-utf8-unread/part-000")
    val w = Judge.script(cluster.broker, j)
    try { w.raw(line(4)); w.raw(line(400)) }
    finally { w.sync(); w.close() }
    assert(Judge.read(cluster.broker, j, committed = false).size == 2, "Go's reader reads both")
    val schema = "user STRING, amount INT, note STRING"
    val whole = reader(j, schema, "failOnMalformed" -> "false").load().select("user", "amount", "note").collect()
    assert(whole.isEmpty, "both are malformed read whole")
    val users = reader(j, schema, "failOnMalformed" -> "false").load().select("user").collect().map(_.getString(0))
    assert(users.isEmpty || users.length == 2,
      s"reading user, one message is malformed and the other not: ${users.toSeq} (the whole read: none)")
  }

  test("without a schema the rows are the untyped ones; a schema's field may not take the struct's name") {
    val j = journal("typed/untyped/part-000")
    Judge.publishEvents(cluster.broker, j, 20)
    val untyped = spark.read.format("gazette").option("broker", cluster.broker).option("journals", j).load()
    assert(untyped.schema == MessageToRow.schema(includeLabels = false))
    assert(untyped.count() == judged(j).size)
    val e = intercept[Exception](reader(j, "_gazette STRING, amount INT").load())
    assert(message(e).contains("GAZETTE_INVALID_SCHEMA") && message(e).contains("_gazette"), message(e))
  }
}

private object TypedRowsIntegrationSuite {

  /** One purchase event, as the judge's events carry it. */
  final case class Event(user: String, amount: Integer, ts: Instant, kind: String, seq: java.lang.Long)

  object Event {
    def apply(r: Row): Event = Event(r.getString(1), r.getAs[Integer](2),
      Option(r.getAs[Timestamp](3)).map(_.toInstant).orNull, r.getString(4), r.getAs[java.lang.Long](5))
  }

  def event(r: JudgeRecord): Event = {
    val o = Json.parse(r.payload).getAsJsonObject
    def opt(name: String) = Option(o.get(name)).filterNot(_.isJsonNull)
    Event(
      opt("user").map(_.getAsString).orNull,
      opt("amount").map(e => Integer.valueOf(e.getAsInt)).orNull,
      opt("ts").map(e => Instant.parse(e.getAsString)).orNull,
      opt("kind").map(_.getAsString).orNull,
      opt("seq").map(e => java.lang.Long.valueOf(e.getAsLong)).orNull
    )
  }

  def message(e: Throwable): String = Iterator.iterate(e)(_.getCause).takeWhile(_ != null).map(_.getMessage)
    .mkString(" / ")
}
