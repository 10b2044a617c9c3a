package io.sparkgazette.spark
package source
package offsets

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import io.sparkgazette.spark.errors.GazetteUnsupportedOperationException
import io.sparkgazette.spark.source.realtime.RealTimeStreams
import io.sparkgazette.spark.testing.SparkThrowables.condition
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.scalatest.funsuite.AnyFunSuite

class SourceOptionsSuite extends AnyFunSuite {
  private def parse(streaming: Boolean, kv: (String, String)*) =
    SourceOptions.parse(new CaseInsensitiveStringMap(kv.toMap.asJava), streaming)
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
    val o = parse(
      streaming = false,
      "BROKER" -> "http://a:1,http://b:2",
      "journals" -> "x, y,x",
      "startingoffsets" -> """{"x": -2, "y": 17}""",
      "endingOffsets" -> "latest",
      "maxBytesPerTrigger" -> "100",
      "minBytesPerTrigger" -> "10",
      "maxTriggerDelay" -> "30s",
      "producerPruneHorizon" -> "7d"
    )
    assert(o.target == JournalTarget.ByName(Seq("x", "y")))
    assert(o.startingOffsets == OffsetSpec.Specific(Map("x" -> -2L, "y" -> 17L)))
    assert(o.maxTriggerDelay == 30.seconds && o.producerPruneHorizon == 7.days)
  }

  test("each bad value fails naming its option") {
    assert(error(true, "selector" -> "app=b") contains "'broker' is required")
    assert(error(true, "broker" -> "http://x:1") contains "'selector' or 'journals'")
    assert(error(true, base :+ ("readCommitted" -> "maybe"): _*) contains
      "'readCommitted' has invalid value 'maybe': expected true or false")
    assert(error(true, base :+ ("maxBytesPerTrigger" -> "-5"): _*) contains "'maxBytesPerTrigger'")
    assert(error(true, base ++ Seq("maxBytesPerTrigger" -> "5", "minBytesPerTrigger" -> "6"): _*) contains
      "'minBytesPerTrigger'")
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
    assert(error(true, base :+ ("realTimePartitions" -> "0"): _*) contains "'realTimePartitions'")
  }

  test("packing: 16 MiB per task by default, and the session's parallelism unless minPartitions says") {
    val s = parse(streaming = true, base: _*)
    assert(s.bytesPerPartition == (16L << 20) && s.minPartitions.isEmpty)
    val o = parse(streaming = true, base ++ Seq("bytesPerPartition" -> "1048576", "MINPARTITIONS" -> "8"): _*)
    assert(
      o.bytesPerPartition == (1L << 20) && o.minPartitions.contains(8) && RangeSplits.minPartitions(o) == 8)
  }

  test("starting and ending by time: Kafka's names, values and precedence") {
    val ts = """{"x": 1767225600000}"""
    val s = parse(
      streaming = true,
      base ++ Seq("startingTimestamp" -> "1767225600000", "startingOffsetsByTimestamp" -> ts,
        "startingOffsets" -> "earliest", "STARTINGOFFSETSBYTIMESTAMPSTRATEGY" -> "Latest"): _*
    )
    assert(s.startingOffsets == OffsetSpec.AtTime(1767225600000L) && s.noMessageAtStart == NoMessageAtTime.Latest)
    val byJournal =
      parse(streaming = true, base ++ Seq("startingOffsetsByTimestamp" -> ts, "startingOffsets" -> "earliest"): _*)
    assert(byJournal.startingOffsets == OffsetSpec.AtTimes(Map("x" -> 1767225600000L)))
    assert(byJournal.noMessageAtStart == NoMessageAtTime.Error)
    val b = parse(
      streaming = false,
      base ++ Seq("endingTimestamp" -> "2000", "endingOffsetsByTimestamp" -> """{"x": 5}""",
        "endingOffsets" -> "latest", "startingTimestamp" -> "1000"): _*
    )
    assert(b.endingOffsets == OffsetSpec.AtTime(2000L) && b.startingOffsets == OffsetSpec.AtTime(1000L))
    assert(parse(streaming = false, base :+ ("endingOffsetsByTimestamp" -> """{"x": 5}"""): _*).endingOffsets ==
      OffsetSpec.AtTimes(Map("x" -> 5L)))
  }

  test("bad times fail naming their option, also where another option takes precedence") {
    assert(error(true, base :+ ("startingTimestamp" -> "yesterday"): _*) contains
      "'startingTimestamp' has invalid value 'yesterday'")
    assert(error(true, base :+ ("startingTimestamp" -> "-1"): _*) contains "'startingTimestamp'")
    // Beyond what a UUID's clock holds (year 3409), a time would wrap around: refused by name.
    assert(error(false, base :+ ("endingTimestamp" -> "99999999999999"): _*) contains "'endingTimestamp'")
    assert(error(false, base :+ ("endingTimestamp" -> Long.MaxValue.toString): _*) contains "'endingTimestamp'")
    assert(error(true, base :+ ("startingOffsetsByTimestamp" -> """{"a": 99999999999999}"""): _*) contains
      "'startingOffsetsByTimestamp'")
    assert(error(true, base :+ ("startingOffsetsByTimestamp" -> """{"x": -5}"""): _*) contains "journal x has -5")
    assert(error(true, base :+ ("startingOffsetsByTimestamp" -> "1000"): _*) contains "'startingOffsetsByTimestamp'")
    assert(error(true, base ++ Seq("startingTimestamp" -> "1", "startingOffsets" -> "nowhere"): _*) contains
      "'startingOffsets'")
    assert(error(true, base ++ Seq("startingTimestamp" -> "1", "startingOffsetsByTimestamp" -> "{"): _*) contains
      "'startingOffsetsByTimestamp'")
    assert(error(false,
      base ++ Seq("endingTimestamp" -> "1", "endingOffsetsByTimestamp" -> """{"x": "soon"}"""): _*) contains
      "'endingOffsetsByTimestamp'")
    assert(error(true, base :+ ("startingOffsetsByTimestampStrategy" -> "earliest"): _*) contains
      "expected error or latest")
    assert(error(true, base :+ ("endingTimestamp" -> "5"): _*) contains "endingTimestamp applies to batch queries only")
    assert(error(true, base :+ ("endingOffsetsByTimestamp" -> """{"x": 5}"""): _*) contains "batch queries only")
    assert(error(false, base ++ Seq("startingTimestamp" -> "10", "endingTimestamp" -> "5"): _*) contains
      "'endingTimestamp' has invalid value '5': expected a time at or after the starting time (10)")
    assert(error(false,
      base ++ Seq("startingOffsetsByTimestamp" -> """{"x": 10, "y": 1}""",
        "endingOffsetsByTimestamp" -> """{"x": 5}"""): _*) contains "for journal x")
  }

  test("real-time tasks: the session's parallelism unless realTimePartitions says; refused without real-time mode") {
    val s = parse(streaming = true, base: _*)
    assert(s.realTimePartitions.isEmpty && RangeSplits.realTimePartitions(s) >= 1)
    val o = parse(streaming = true, base :+ ("REALTIMEPARTITIONS" -> "3"): _*)
    assert(o.realTimePartitions.contains(3) && RangeSplits.realTimePartitions(o) == 3)
    RealTimeStreams.refuseWithout(s, available = false, "4.0.1")
    RealTimeStreams.refuseWithout(o, available = true, "4.3.0")
    val e =
      intercept[GazetteUnsupportedOperationException](RealTimeStreams.refuseWithout(o, available = false, "4.0.1"))
    assert(e.getMessage.contains("'realTimePartitions'") && e.getMessage.contains("Spark 4.0.1 has no real-time mode"))
    assert(condition(e) == "GAZETTE_UNSUPPORTED_TRIGGER")
  }

  test("real-time offsets carry each journal's producers' states through JSON; others write none") {
    val p = io.sparkgazette.message.ProducerState("a/2", io.sparkgazette.message.ProducerId(0x0102030405L), 77L, 12L)
    // A producer rolled back to an older ACK: its sequence clock stays above its last ACK.
    val back = io.sparkgazette.message.ProducerState("a/2", io.sparkgazette.message.ProducerId(9L), 50L, -1L, 90L)
    val o = JournalOffsets(
      scala.collection.immutable.SortedMap("a/2" -> JournalPosition(40L, 3L, 0L), "b/1" -> JournalPosition(5L)),
      Map("a/2" -> Seq(p, back), "b/1" -> Nil))
    assert(o.json() ==
      """{"a/2":{"offset":40,"revision":3,"origin":0,"producers":[[4328719365,77,12],[9,50,-1,90]]},""" +
      """"b/1":{"offset":5,"revision":0,"origin":-1,"producers":[]}}""")
    assert(JournalOffsets.fromJson(o.json()) == o)
    assert(!JournalOffsets(Map("a" -> JournalPosition(7L))).json().contains("producers"))
    // Every producer's state is checked as the offset is read, not the first alone.
    intercept[IllegalArgumentException](
      JournalOffsets.fromJson("""{"a":{"offset":1,"producers":[[1,2,-1],[1,"x",-1]]}}""").producers)
  }

  test("offsets round-trip through JSON, with each journal's revision and origin; plain numbers are offsets") {
    val o = JournalOffsets(Map("b/1" -> JournalPosition(5L, 17L, 0L), "a/2" -> JournalPosition(1L << 40, 3L, 1024L)))
    assert(o.json() ==
      """{"a/2":{"offset":1099511627776,"revision":3,"origin":1024},"b/1":{"offset":5,"revision":17,"origin":0}}""")
    assert(JournalOffsets.fromJson(o.json()) == o)
    assert(JournalOffsets.fromJson("""{"a": 7}""") == JournalOffsets(Map("a" -> JournalPosition(7L))))
    intercept[IllegalArgumentException](JournalOffsets.fromJson("""{"a": 1.5}"""))
    intercept[IllegalArgumentException](JournalOffsets.fromJson("""{"a": {"offset": 1, "revision": "x"}}"""))
  }
}
