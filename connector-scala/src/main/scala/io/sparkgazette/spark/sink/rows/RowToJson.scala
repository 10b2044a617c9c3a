package io.sparkgazette.spark
package sink
package rows

import java.io.ByteArrayOutputStream
import java.time.{Instant, LocalDate, LocalDateTime, ZoneOffset}
import java.util.Base64

import io.sparkgazette.spark.errors.GazetteErrors
import com.fasterxml.jackson.core.{JsonFactory, JsonGenerator}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.sql.types._

/** Rows written as JSON objects of all their columns, for ndjson journals given no `value`
  * column: timestamps as ISO-8601 instants, timestamps without a time zone as ISO local
  * date-times, dates as ISO dates, binary as base64, maps with their keys as strings (binary
  * keys in base64). The top-level column `skip` (the sink's `origin`) is left out.
  */
private[sink] final class RowToJson(schema: StructType, skip: Int = -1) {
  private val factory = new JsonFactory()

  def apply(row: InternalRow): Array[Byte] = {
    val out = new ByteArrayOutputStream(256)
    val g = factory.createGenerator(out)
    g.writeStartObject()
    fields(g, row, schema, skip)
    g.writeEndObject()
    g.close()
    out.toByteArray
  }

  private def struct(g: JsonGenerator, row: InternalRow, st: StructType): Unit = {
    g.writeStartObject()
    fields(g, row, st, -1)
    g.writeEndObject()
  }

  private def fields(g: JsonGenerator, row: InternalRow, st: StructType, skip: Int): Unit =
    st.fields.zipWithIndex.foreach { case (f, i) =>
      if (i != skip && !row.isNullAt(i)) { g.writeFieldName(f.name); value(g, row.get(i, f.dataType), f.dataType) }
    }

  private def value(g: JsonGenerator, v: Any, t: DataType): Unit = (t, v) match {
    case (_, null) => g.writeNull()
    case (StringType, s) => g.writeString(s.toString)
    case (BooleanType, b: Boolean) => g.writeBoolean(b)
    case (ByteType, b: Byte) => g.writeNumber(b.toInt)
    case (ShortType, s: Short) => g.writeNumber(s.toInt)
    case (IntegerType, n: Int) => g.writeNumber(n)
    case (LongType, n: Long) => g.writeNumber(n)
    case (FloatType, n: Float) => g.writeNumber(n)
    case (DoubleType, n: Double) => g.writeNumber(n)
    case (_: DecimalType, d: Decimal) => g.writeNumber(d.toJavaBigDecimal)
    case (BinaryType, b: Array[Byte]) => g.writeString(Base64.getEncoder.encodeToString(b))
    case (DateType, d: Int) => g.writeString(LocalDate.ofEpochDay(d.toLong).toString)
    case (TimestampType, us: Long) => g.writeString(instant(us).toString)
    // A timestamp without a time zone is a wall-clock reading: no zone is invented for it.
    case (TimestampNTZType, us: Long) => g.writeString(LocalDateTime.ofInstant(instant(us), ZoneOffset.UTC).toString)
    case (st: StructType, r: InternalRow) => struct(g, r, st)
    case (ArrayType(et, _), a: ArrayData) =>
      g.writeStartArray()
      (0 until a.numElements()).foreach(i => value(g, if (a.isNullAt(i)) null else a.get(i, et), et))
      g.writeEndArray()
    case (MapType(kt, vt, _), m: MapData) =>
      g.writeStartObject()
      val (ks, vs) = (m.keyArray(), m.valueArray())
      (0 until m.numElements()).foreach { i =>
        g.writeFieldName(kt match {
          case BinaryType => Base64.getEncoder.encodeToString(ks.getBinary(i))
          case _ => ks.get(i, kt).toString
        })
        value(g, if (vs.isNullAt(i)) null else vs.get(i, vt), vt)
      }
      g.writeEndObject()
    case (other, _) => throw GazetteErrors.notWritableAsJson(other.simpleString)
  }

  private def instant(micros: Long): Instant =
    Instant.ofEpochSecond(Math.floorDiv(micros, 1000000L), Math.floorMod(micros, 1000000L) * 1000L)
}
