package io.sparkgazette.spark
package source
package rows

import io.sparkgazette.message.{Clock, Envelope, Flags, RawMessage}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/** The source's rows: one per message, identified by `(journal, begin)`. */
private[spark] object MessageToRow {
  val Journal = "journal"
  val Begin = "begin"
  val End = "end"
  val Value = "value"
  val UuidColumn = "uuid"
  val Producer = "producer"
  val ClockColumn = "clock"
  val PublishTime = "publishTime"
  val Labels = "labels"

  def schema(includeLabels: Boolean): StructType = {
    val base = StructType(Seq(
        StructField(Journal, StringType, nullable = false),
        StructField(Begin, LongType, nullable = false),
        StructField(End, LongType, nullable = false),
        StructField(Value, BinaryType, nullable = false),
        StructField(UuidColumn, StringType),
        StructField(Producer, StringType),
        StructField(ClockColumn, LongType),
        StructField(PublishTime, TimestampType)
      ))
    if (includeLabels) base.add(StructField(Labels,
        MapType(StringType, ArrayType(StringType, containsNull = false), valueContainsNull = false)))
    else base
  }

  private val columnNames: Set[String] = schema(includeLabels = true).fieldNames.toSet

  /** The columns of `schema(includeLabels)` that `required` names, in the schema's order: what a
    * query that selects only those reads (Spark matches columns by name).
    */
  def pruned(includeLabels: Boolean, required: StructType): StructType = {
    val names = required.fieldNames.toSet
    StructType(schema(includeLabels).fields.filter(f => names.contains(f.name)))
  }

  /** Converts envelopes of one journal into rows of `columns` (names of [[schema]]'s columns):
    * a column no query reads is never built, so a count or a `value`-only query does not pay
    * for formatting UUIDs and producers. The journal's name and labels are encoded once.
    */
  final class Converter(journal: String, labels: Option[Map[String, Seq[String]]], columns: Seq[String]) {
    private val journalUtf8 = UTF8String.fromString(journal)
    private val labelsData = labels.map { ls =>
      val keys = ls.keys.toSeq.sorted
      ArrayBasedMapData(
        keys.map(UTF8String.fromString).toArray[Any],
        keys.map(k => new GenericArrayData(ls(k).map(UTF8String.fromString).toArray[Any])).toArray[Any])
    }
    columns.find(c => !columnNames.contains(c))
      .foreach(c => throw new IllegalArgumentException(s"the source has no column $c"))
    if (columns.contains(Labels) && labelsData.isEmpty)
      throw new IllegalArgumentException(s"column $Labels needs the journal's labels")

    // Each column's ordinal in the row, or -1 when no query reads it.
    private def ordinal(name: String): Int = columns.indexOf(name)
    private val journalAt = ordinal(Journal)
    private val beginAt = ordinal(Begin)
    private val endAt = ordinal(End)
    private val valueAt = ordinal(Value)
    private val uuidAt = ordinal(UuidColumn)
    private val producerAt = ordinal(Producer)
    private val clockAt = ordinal(ClockColumn)
    private val publishTimeAt = ordinal(PublishTime)
    private val labelsAt = ordinal(Labels)
    private val width = columns.size

    def apply(env: Envelope[RawMessage]): InternalRow = {
      val row = new GenericInternalRow(width)
      if (journalAt >= 0) row.update(journalAt, journalUtf8)
      if (beginAt >= 0) row.setLong(beginAt, env.begin)
      if (endAt >= 0) row.setLong(endAt, env.end)
      if (valueAt >= 0) row.update(valueAt, env.message.bytes)
      if (env.clock == 0) {
        if (uuidAt >= 0) row.setNullAt(uuidAt)
        if (producerAt >= 0) row.setNullAt(producerAt)
        if (clockAt >= 0) row.setNullAt(clockAt)
        if (publishTimeAt >= 0) row.setNullAt(publishTimeAt)
      } else {
        if (uuidAt >= 0) row.update(uuidAt, UTF8String.fromString(env.message.uuid.toString))
        if (producerAt >= 0) row.update(producerAt, UTF8String.fromString(env.producer.toString))
        if (clockAt >= 0) row.setLong(clockAt, env.clock)
        if (publishTimeAt >= 0) {
          val t = Clock.toInstant(env.clock)
          row.setLong(publishTimeAt, Math.addExact(Math.multiplyExact(t.getEpochSecond, 1000000L), t.getNano / 1000L))
        }
      }
      if (labelsAt >= 0) row.update(labelsAt, labelsData.get)
      row
    }
  }

  /** Whether a row's UUID marks an acknowledgement; kept here so the reader and tests agree. */
  def isAck(env: Envelope[RawMessage]): Boolean = env.clock != 0 && env.flags == Flags.AckTxn
}
