package io.sparkgazette.spark
package sink
package rows

import io.sparkgazette.message._
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.sink.config.{SinkConfig, SinkTargets}
import org.apache.spark.sql.catalyst.InternalRow

/** What a writer makes of a row: the journal it goes to (its `journal` column, or the mapping
  * over the epoch's journals) and the payload written there (its `value`, or the row as JSON),
  * checked against the journal's framing.
  */
private[sink] final class SinkRows(config: SinkConfig, targets: SinkTargets, partitionId: Int,
    realTime: Boolean = false) {
  private val cols = config.columns
  // Only real-time writes take `origin` as the rows' origin; other writes write it as any column.
  private val toJson = if (cols.jsonRows) new RowToJson(cols.schema, skip = if (realTime) cols.origin else -1) else null

  val framings: Map[String, Framing] =
    targets.contentTypes.filter(j => !targets.unwritable.contains(j._1)).map {
      case (j, ct) => j -> Framing.forContentType(ct, config.options.uuidPointer, config.options.uuidField).toOption.get
    }
  // CSV journals' widths, UUID column included: the journal's first record's, or else this
  // task's first row's there.
  private val csvWidths = scala.collection.mutable.Map[String, Int]() ++ targets.csvWidths
  private val mapping =
    if (targets.journals.size > 1) Mapping.named(targets.mapping, targets.journals).toOption.get else null

  def journalOf(row: InternalRow): String = journalOf(row, Array.emptyByteArray)

  /** The journal of `row`, mapped by `keyless` where it has no `key` column. */
  def journalOf(row: InternalRow, keyless: => Array[Byte]): String =
    if (cols.journal >= 0 && !row.isNullAt(cols.journal)) row.getUTF8String(cols.journal).toString
    else if (mapping == null) targets.journals.head
    else mapping.journalFor(
      if (cols.key < 0) keyless else if (!row.isNullAt(cols.key)) row.getBinary(cols.key) else Array.emptyByteArray)

  /** The framing of `journal`, a journal of the epoch the sink can write. */
  def framingOf(journal: String, rowNumber: Long): Framing =
    framings.getOrElse(
      journal, throw GazetteErrors.rowJournalNotTargeted(journal, rowNumber, partitionId, targets.journals))

  /** The payload of `row` in `journal`, refused where the journal's framing cannot take it. */
  def payloadOf(row: InternalRow, journal: String, framing: Framing, rowNumber: Long): Array[Byte] = {
    val payload =
      if (cols.jsonRows) {
        if (framing.contentType != Framing.JsonLines)
          throw GazetteErrors.valueColumnNeeded(journal, framing.contentType)
        toJson(row)
      } else if (row.isNullAt(cols.value))
        throw GazetteErrors.nullValue(rowNumber, partitionId)
      else row.getBinary(cols.value)
    if (framing.contentType == Framing.Csv) CsvFraming.framedWidth(payload).foreach { w =>
      val expected = csvWidths.getOrElseUpdate(journal, w)
      if (w != expected) throw GazetteErrors.csvWidth(journal, rowNumber, partitionId, w - 1, expected - 1)
    }
    payload
  }
}
