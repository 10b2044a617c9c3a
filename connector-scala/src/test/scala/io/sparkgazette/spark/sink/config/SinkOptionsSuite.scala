package io.sparkgazette.spark
package sink
package config

import io.sparkgazette.spark.sink.staging.StagingThreshold
import org.scalatest.funsuite.AnyFunSuite

class SinkOptionsSuite extends AnyFunSuite {
  private val b = "broker" -> "http://127.0.0.1:8080"

  test("sink options: one journal or a selector, mappings, delivery guarantees, and checkpointLocation for streams") {
    val b = "broker" -> "http://127.0.0.1:8080"
    val o = SinkOptions.parse(
      Map(b, "selector" -> "prefix=out/", "MAPPING" -> "Modulo", "checkpointLocation" -> "/c"), streaming = true)
    assert(o.target == WriteTarget.BySelector("prefix=out/") && o.mapping.contains("modulo") && o.exactlyOnce)
    assert(SinkOptions.parse(Map(b, "path" -> "out/a"), streaming = false).target == WriteTarget.OneJournal("out/a"))
    def sinkError(kv: (String, String)*) =
      intercept[IllegalArgumentException](SinkOptions.parse(kv.toMap, streaming = true)).getMessage
    assert(sinkError(b, "journal" -> "a", "selector" -> "prefix=x/") contains
      "'journal' and 'selector' cannot be used together")
    assert(sinkError(b, "journal" -> "a,b", "checkpointLocation" -> "/c") contains "'journal'")
    assert(sinkError(b, "journal" -> "a", "mapping" -> "hash", "checkpointLocation" -> "/c") contains
      "modulo, rendezvous or random")
    assert(sinkError(b, "journal" -> "a", "deliveryGuarantee" -> "once", "checkpointLocation" -> "/c") contains
      "'deliveryGuarantee'")
    assert(sinkError(b, "journal" -> "a") contains "session-wide default")
    assert(SinkOptions.parse(Map(b, "journal" -> "a", "deliveryGuarantee" -> "at-least-once"),
        streaming = true).checkpointLocation.isEmpty)
    assert(sinkError(b, "journal" -> "a", "checkpointLocation" -> "/c", "test.sinkFault" -> "sometime") contains
      "'test.sinkFault'")
  }

  test("Spark's own options given a streaming sink pass as they are, and change none of the sink's") {
    val base = Map(b, "journal" -> "a", "checkpointLocation" -> "/c")
    val spark = Map(
      "queryName" -> "copies",
      "asyncProgressTrackingEnabled" -> "false",
      "asyncProgressTrackingCheckpointIntervalMs" -> "0",
      "_asyncProgressTrackingOverrideSinkSupportCheck" -> "false"
    )
    assert(SinkOptions.parse(base ++ spark, streaming = true) == SinkOptions.parse(base, streaming = true))
    // Spark's switch past its own refusal of asynchronous progress tracking for this sink is refused:
    // a batch committed, then planned again over another range after a restart, loses rows.
    val e = intercept[IllegalArgumentException](
      SinkOptions.parse(base + ("_asyncProgressTrackingOverrideSinkSupportCheck" -> "true"), streaming = true))
    assert(e.getMessage contains "'_asyncProgressTrackingOverrideSinkSupportCheck' has invalid value 'true'")
  }

  test(
    "sink option readerRingSize: Gazette's default ring, 0 never stages, a threshold per task that shrinks with partitions") {
    val base = Map("broker" -> "http://127.0.0.1:8080", "journal" -> "a", "checkpointLocation" -> "/c")
    assert(SinkOptions.parse(base, streaming = true).readerRingSize == 8192)
    assert(SinkOptions.parse(base + ("readerRingSize" -> "0"), streaming = true).readerRingSize == 0)
    val e = intercept[IllegalArgumentException](SinkOptions.parse(base + ("readerRingSize" -> "-1"), streaming = true))
    assert(e.getMessage contains "'readerRingSize' has invalid value '-1'")
    assert(StagingThreshold(8192, 16) == StagingThreshold(256, 2L << 20))
    assert(StagingThreshold(8192, 200).messages == 20 && StagingThreshold(16, 200).messages == 1)
  }

  test("sink option batchId: batch writes only, exactly once, with a checkpointLocation, a plain name") {
    val b = "broker" -> "http://127.0.0.1:8080"
    def batch(kv: (String, String)*) = SinkOptions.parse((Seq(b, "journal" -> "a") ++ kv).toMap, streaming = false)
    def batchError(kv: (String, String)*) = intercept[IllegalArgumentException](batch(kv: _*)).getMessage
    assert(batch("checkpointLocation" -> "/c", "batchId" -> "2026-11-22_run.1").batchId.contains("2026-11-22_run.1"))
    assert(batch("checkpointLocation" -> "/c").batchId.isEmpty)
    assert(batchError("batchId" -> "x") contains "'checkpointLocation' is required")
    assert(batchError("checkpointLocation" -> "/c", "batchId" -> "a/b") contains "'batchId' has invalid value 'a/b'")
    assert(batchError("checkpointLocation" -> "/c", "batchId" -> ".hidden") contains "'batchId'")
    assert(batchError("checkpointLocation" -> "/c", "batchId" -> "x", "deliveryGuarantee" -> "at-least-once") contains
      "'batchId' and")
    val streaming =
      intercept[IllegalArgumentException](SinkOptions.parse(Map(b, "journal" -> "a", "checkpointLocation" -> "/c",
            "batchId" -> "x"), streaming = true)).getMessage
    assert(streaming contains "batch writes only")
  }

  test("sink columns: value with journal and key, or JSON rows; anything else is named") {
    import org.apache.spark.sql.types._
    val ok = SinkColumns(StructType.fromDDL("value STRING, journal STRING, key BINARY"))
    assert(ok.value == 0 && ok.journal == 1 && ok.key == 2 && !ok.jsonRows)
    assert(SinkColumns(StructType.fromDDL("a INT, b STRING")).jsonRows)
    assert(intercept[IllegalArgumentException](
      SinkColumns(StructType.fromDDL("value STRING, extra INT"))).getMessage contains "Column 'extra'")
    assert(intercept[IllegalArgumentException](SinkColumns(StructType.fromDDL("value INT"))).getMessage contains
      "string or binary")
  }
}
