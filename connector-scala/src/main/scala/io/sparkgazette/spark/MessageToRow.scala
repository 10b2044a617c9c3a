package io.sparkgazette.spark

import io.sparkgazette.message.{Clock, Envelope, Flags, RawMessage}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/** The source's rows: one per message, identified by `(journal, begin)`. */
object MessageToRow {

  def schema(includeLabels: Boolean): StructType = {
    val base = StructType(Seq(
      StructField("journal", StringType, nullable = false),
      StructField("begin", LongType, nullable = false),
      StructField("end", LongType, nullable = false),
      StructField("value", BinaryType, nullable = false),
      StructField("uuid", StringType),
      StructField("producer", StringType),
      StructField("clock", LongType),
      StructField("publishTime", TimestampType)
    ))
    if (includeLabels) base.add(StructField("labels", MapType(StringType, ArrayType(StringType, containsNull = false), valueContainsNull = false)))
    else base
  }

  /** Converts envelopes of one journal; its name and labels are encoded once. */
  final class Converter(journal: String, labels: Option[Map[String, Seq[String]]]) {
    private val journalUtf8 = UTF8String.fromString(journal)
    private val labelsData = labels.map { ls =>
      val keys = ls.keys.toSeq.sorted
      ArrayBasedMapData(
        keys.map(UTF8String.fromString).toArray[Any],
        keys.map(k => new GenericArrayData(ls(k).map(UTF8String.fromString).toArray[Any])).toArray[Any])
    }

    def apply(env: Envelope[RawMessage]): InternalRow = {
      val row = new GenericInternalRow(if (labelsData.isDefined) 9 else 8)
      row.update(0, journalUtf8)
      row.setLong(1, env.begin)
      row.setLong(2, env.end)
      row.update(3, env.message.bytes)
      if (env.clock == 0) {
        row.setNullAt(4); row.setNullAt(5); row.setNullAt(6); row.setNullAt(7)
      } else {
        row.update(4, UTF8String.fromString(env.message.uuid.toString))
        row.update(5, UTF8String.fromString(env.producer.toString))
        row.setLong(6, env.clock)
        val t = Clock.toInstant(env.clock)
        row.setLong(7, Math.addExact(Math.multiplyExact(t.getEpochSecond, 1000000L), t.getNano / 1000L))
      }
      labelsData.foreach(l => row.update(8, l))
      row
    }
  }

  /** Whether a row's UUID marks an acknowledgement; kept here so the reader and tests agree. */
  def isAck(env: Envelope[RawMessage]): Boolean = env.clock != 0 && env.flags == Flags.AckTxn
}
