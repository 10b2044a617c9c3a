package io.sparkgazette.spark

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.scalatest.funsuite.AnyFunSuite

class GazetteOptionsSuite extends AnyFunSuite {
  private def parse(streaming: Boolean, kv: (String, String)*) =
    GazetteOptions.source(new CaseInsensitiveStringMap(kv.toMap.asJava), streaming)
  private def error(streaming: Boolean, kv: (String, String)*) =
    intercept[IllegalArgumentException](parse(streaming, kv: _*)).getMessage
  private val base = Seq("broker" -> "http://127.0.0.1:8080", "selector" -> "prefix=events/")

  test("defaults follow Kafka's: latest for streams, earliest for batches; read committed; fail on data loss") {
    val s = parse(streaming = true, base: _*)
    assert(s.startingOffsets == OffsetSpec.Latest && s.readCommitted && s.failOnDataLoss)
    assert(s.producerPruneHorizon == 24.hours && s.uuidPointer == "/_meta/uuid" && s.uuidField == 1)
    assert(parse(streaming = false, base: _*).startingOffsets == OffsetSpec.Earliest)
  }

  test("option names are case-insensitive; offsets, durations and journal lists are parsed") {
    val o = parse(streaming = false, "BROKER" -> "http://a:1,http://b:2", "journals" -> "x, y,x",
      "startingoffsets" -> """{"x": -2, "y": 17}""", "endingOffsets" -> "latest", "maxBytesPerTrigger" -> "100",
      "minBytesPerTrigger" -> "10", "maxTriggerDelay" -> "30s", "producerPruneHorizon" -> "7d")
    assert(o.target == JournalTarget.ByName(Seq("x", "y")))
    assert(o.startingOffsets == OffsetSpec.Specific(Map("x" -> -2L, "y" -> 17L)))
    assert(o.maxTriggerDelay == 30.seconds && o.producerPruneHorizon == 7.days)
  }

  test("each bad value fails naming its option") {
    assert(error(true, "selector" -> "app=b") contains "'broker' is required")
    assert(error(true, "broker" -> "http://x:1") contains "'selector' or 'journals'")
    assert(error(true, base :+ ("readCommitted" -> "maybe"): _*) contains "'readCommitted' has invalid value 'maybe': expected true or false")
    assert(error(true, base :+ ("maxBytesPerTrigger" -> "-5"): _*) contains "'maxBytesPerTrigger'")
    assert(error(true, base ++ Seq("maxBytesPerTrigger" -> "5", "minBytesPerTrigger" -> "6"): _*) contains "'minBytesPerTrigger'")
    assert(error(true, base :+ ("maxTriggerDelay" -> "5s"): _*) contains "together with minBytesPerTrigger")
    assert(error(true, base :+ ("endingOffsets" -> "latest"): _*) contains "batch queries only")
    assert(error(false, base :+ ("endingOffsets" -> "earliest"): _*) contains "'endingOffsets'")
    assert(error(true, base :+ ("startingOffsets" -> """{"a": -3}"""): _*) contains "journal a has -3")
    assert(error(true, base :+ ("uuidField" -> "0"): _*) contains "'uuidField'")
    assert(error(true, base :+ ("uuidPointer" -> "meta"): _*) contains "'uuidPointer'")
    assert(error(true, base :+ ("producerPruneHorizon" -> "soon"): _*) contains "'producerPruneHorizon'")
    assert(error(true, base :+ ("typo" -> "1"): _*) contains "Unknown Gazette option 'typo'")
    assert(error(true, base :+ ("bytesPerPartition" -> "0"): _*) contains "'bytesPerPartition'")
    assert(error(true, base :+ ("minPartitions" -> "-1"): _*) contains "'minPartitions'")
  }

  test("packing: 16 MiB per task by default, and the session's parallelism unless minPartitions says") {
    val s = parse(streaming = true, base: _*)
    assert(s.bytesPerPartition == (16L << 20) && s.minPartitions.isEmpty)
    val o = parse(streaming = true, base ++ Seq("bytesPerPartition" -> "1048576", "MINPARTITIONS" -> "8"): _*)
    assert(o.bytesPerPartition == (1L << 20) && o.minPartitions.contains(8) && GazetteMicroBatchStream.minPartitions(o) == 8)
  }

  test("starting and ending by time: Kafka's names, values and precedence") {
    val ts = """{"x": 1767225600000}"""
    val s = parse(streaming = true, base ++ Seq("startingTimestamp" -> "1767225600000", "startingOffsetsByTimestamp" -> ts,
      "startingOffsets" -> "earliest", "STARTINGOFFSETSBYTIMESTAMPSTRATEGY" -> "Latest"): _*)
    assert(s.startingOffsets == OffsetSpec.AtTime(1767225600000L) && s.noMessageAtStart == NoMessageAtTime.Latest)
    val byJournal = parse(streaming = true, base ++ Seq("startingOffsetsByTimestamp" -> ts, "startingOffsets" -> "earliest"): _*)
    assert(byJournal.startingOffsets == OffsetSpec.AtTimes(Map("x" -> 1767225600000L)))
    assert(byJournal.noMessageAtStart == NoMessageAtTime.Error)
    val b = parse(streaming = false, base ++ Seq("endingTimestamp" -> "2000", "endingOffsetsByTimestamp" -> """{"x": 5}""",
      "endingOffsets" -> "latest", "startingTimestamp" -> "1000"): _*)
    assert(b.endingOffsets == OffsetSpec.AtTime(2000L) && b.startingOffsets == OffsetSpec.AtTime(1000L))
    assert(parse(streaming = false, base :+ ("endingOffsetsByTimestamp" -> """{"x": 5}"""): _*).endingOffsets ==
      OffsetSpec.AtTimes(Map("x" -> 5L)))
  }

  test("bad times fail naming their option, also where another option takes precedence") {
    assert(error(true, base :+ ("startingTimestamp" -> "yesterday"): _*) contains "'startingTimestamp' has invalid value 'yesterday'")
    assert(error(true, base :+ ("startingTimestamp" -> "-1"): _*) contains "'startingTimestamp'")
    // Beyond what a UUID's clock holds (year 3409), a time would wrap around: refused by name.
    assert(error(false, base :+ ("endingTimestamp" -> "99999999999999"): _*) contains "'endingTimestamp'")
    assert(error(false, base :+ ("endingTimestamp" -> Long.MaxValue.toString): _*) contains "'endingTimestamp'")
    assert(error(true, base :+ ("startingOffsetsByTimestamp" -> """{"a": 99999999999999}"""): _*) contains "'startingOffsetsByTimestamp'")
    assert(error(true, base :+ ("startingOffsetsByTimestamp" -> """{"x": -5}"""): _*) contains "journal x has -5")
    assert(error(true, base :+ ("startingOffsetsByTimestamp" -> "1000"): _*) contains "'startingOffsetsByTimestamp'")
    assert(error(true, base ++ Seq("startingTimestamp" -> "1", "startingOffsets" -> "nowhere"): _*) contains "'startingOffsets'")
    assert(error(true, base ++ Seq("startingTimestamp" -> "1", "startingOffsetsByTimestamp" -> "{"): _*) contains
      "'startingOffsetsByTimestamp'")
    assert(error(false, base ++ Seq("endingTimestamp" -> "1", "endingOffsetsByTimestamp" -> """{"x": "soon"}"""): _*) contains
      "'endingOffsetsByTimestamp'")
    assert(error(true, base :+ ("startingOffsetsByTimestampStrategy" -> "earliest"): _*) contains "expected error or latest")
    assert(error(true, base :+ ("endingTimestamp" -> "5"): _*) contains "endingTimestamp applies to batch queries only")
    assert(error(true, base :+ ("endingOffsetsByTimestamp" -> """{"x": 5}"""): _*) contains "batch queries only")
    assert(error(false, base ++ Seq("startingTimestamp" -> "10", "endingTimestamp" -> "5"): _*) contains
      "'endingTimestamp' has invalid value '5': expected a time at or after the starting time (10)")
    assert(error(false, base ++ Seq("startingOffsetsByTimestamp" -> """{"x": 10, "y": 1}""",
      "endingOffsetsByTimestamp" -> """{"x": 5}"""): _*) contains "for journal x")
  }

  test("offsets round-trip through JSON, with each journal's revision and origin; plain numbers are offsets") {
    val o = JournalOffsets(Map("b/1" -> JournalPosition(5L, 17L, 0L), "a/2" -> JournalPosition(1L << 40, 3L, 1024L)))
    assert(o.json() == """{"a/2":{"offset":1099511627776,"revision":3,"origin":1024},"b/1":{"offset":5,"revision":17,"origin":0}}""")
    assert(JournalOffsets.fromJson(o.json()) == o)
    assert(JournalOffsets.fromJson("""{"a": 7}""") == JournalOffsets(Map("a" -> JournalPosition(7L))))
    intercept[IllegalArgumentException](JournalOffsets.fromJson("""{"a": 1.5}"""))
    intercept[IllegalArgumentException](JournalOffsets.fromJson("""{"a": {"offset": 1, "revision": "x"}}"""))
  }

  test("sink options: one journal or a selector, mappings, delivery guarantees, and checkpointLocation for streams") {
    val b = "broker" -> "http://127.0.0.1:8080"
    val o = GazetteOptions.sink(Map(b, "selector" -> "prefix=out/", "MAPPING" -> "Modulo", "checkpointLocation" -> "/c"), streaming = true)
    assert(o.target == WriteTarget.BySelector("prefix=out/") && o.mapping.contains("modulo") && o.exactlyOnce)
    assert(GazetteOptions.sink(Map(b, "path" -> "out/a"), streaming = false).target == WriteTarget.OneJournal("out/a"))
    def sinkError(kv: (String, String)*) = intercept[IllegalArgumentException](GazetteOptions.sink(kv.toMap, streaming = true)).getMessage
    assert(sinkError(b, "journal" -> "a", "selector" -> "prefix=x/") contains "'journal' and 'selector' cannot be used together")
    assert(sinkError(b, "journal" -> "a,b", "checkpointLocation" -> "/c") contains "'journal'")
    assert(sinkError(b, "journal" -> "a", "mapping" -> "hash", "checkpointLocation" -> "/c") contains "modulo, rendezvous or random")
    assert(sinkError(b, "journal" -> "a", "deliveryGuarantee" -> "once", "checkpointLocation" -> "/c") contains "'deliveryGuarantee'")
    assert(sinkError(b, "journal" -> "a") contains "session-wide default")
    assert(GazetteOptions.sink(Map(b, "journal" -> "a", "deliveryGuarantee" -> "at-least-once"), streaming = true).checkpointLocation.isEmpty)
    assert(sinkError(b, "journal" -> "a", "checkpointLocation" -> "/c", "testFault" -> "sometime") contains "'testFault'")
  }

  test("sink option readerRingSize: Gazette's default ring, 0 never stages, a threshold per task that shrinks with partitions") {
    val base = Map("broker" -> "http://127.0.0.1:8080", "journal" -> "a", "checkpointLocation" -> "/c")
    assert(GazetteOptions.sink(base, streaming = true).readerRingSize == 8192)
    assert(GazetteOptions.sink(base + ("readerRingSize" -> "0"), streaming = true).readerRingSize == 0)
    val e = intercept[IllegalArgumentException](GazetteOptions.sink(base + ("readerRingSize" -> "-1"), streaming = true))
    assert(e.getMessage contains "'readerRingSize' has invalid value '-1'")
    assert(StagingThreshold(8192, 16) == StagingThreshold(256, 2L << 20))
    assert(StagingThreshold(8192, 200).messages == 20 && StagingThreshold(16, 200).messages == 1)
  }

  test("sink option batchId: batch writes only, exactly once, with a checkpointLocation, a plain name") {
    val b = "broker" -> "http://127.0.0.1:8080"
    def batch(kv: (String, String)*) = GazetteOptions.sink((Seq(b, "journal" -> "a") ++ kv).toMap, streaming = false)
    def batchError(kv: (String, String)*) = intercept[IllegalArgumentException](batch(kv: _*)).getMessage
    assert(batch("checkpointLocation" -> "/c", "batchId" -> "2026-11-22_run.1").batchId.contains("2026-11-22_run.1"))
    assert(batch("checkpointLocation" -> "/c").batchId.isEmpty)
    assert(batchError("batchId" -> "x") contains "'checkpointLocation' is required")
    assert(batchError("checkpointLocation" -> "/c", "batchId" -> "a/b") contains "'batchId' has invalid value 'a/b'")
    assert(batchError("checkpointLocation" -> "/c", "batchId" -> ".hidden") contains "'batchId'")
    assert(batchError("checkpointLocation" -> "/c", "batchId" -> "x", "deliveryGuarantee" -> "at-least-once") contains "'batchId' and")
    val streaming = intercept[IllegalArgumentException](GazetteOptions.sink(Map(b, "journal" -> "a", "checkpointLocation" -> "/c",
      "batchId" -> "x"), streaming = true)).getMessage
    assert(streaming contains "batch writes only")
  }

  test("sink columns: value with journal and key, or JSON rows; anything else is named") {
    import org.apache.spark.sql.types._
    val ok = SinkColumns(StructType.fromDDL("value STRING, journal STRING, key BINARY"))
    assert(ok.value == 0 && ok.journal == 1 && ok.key == 2 && !ok.jsonRows)
    assert(SinkColumns(StructType.fromDDL("a INT, b STRING")).jsonRows)
    assert(intercept[IllegalArgumentException](SinkColumns(StructType.fromDDL("value STRING, extra INT"))).getMessage contains "Column 'extra'")
    assert(intercept[IllegalArgumentException](SinkColumns(StructType.fromDDL("value INT"))).getMessage contains "string or binary")
  }
}
