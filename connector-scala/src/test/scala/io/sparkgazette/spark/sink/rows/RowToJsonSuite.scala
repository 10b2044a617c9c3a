package io.sparkgazette.spark
package sink
package rows

import java.nio.charset.StandardCharsets.UTF_8
import java.time.{Instant, LocalDateTime}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, DateTimeUtils}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

class RowToJsonSuite extends AnyFunSuite {
  private def json(schema: String, values: Any*) =
    new String(new RowToJson(StructType.fromDDL(schema))(InternalRow(values: _*)), UTF_8)

  test("timestamps are instants; timestamps without a time zone stay local date-times") {
    val at = Instant.parse("2026-11-22T13:04:05.123456Z")
    val local = LocalDateTime.parse("2026-11-22T13:04:05.123456")
    assert(json("t TIMESTAMP, l TIMESTAMP_NTZ", DateTimeUtils.instantToMicros(at),
      DateTimeUtils.localDateTimeToMicros(local)) ==
      """{"t":"2026-11-22T13:04:05.123456Z","l":"2026-11-22T13:04:05.123456"}""")
  }

  test("binary values and binary map keys are base64") {
    val m = ArrayBasedMapData(Array[Any](Array[Byte](1, 2, 3)), Array[Any](UTF8String.fromString("v")))
    assert(json("b BINARY, m MAP<BINARY, STRING>", Array[Byte](-1, 0), m) == """{"b":"/wA=","m":{"AQID":"v"}}""")
  }
}
