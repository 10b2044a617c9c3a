package io.sparkgazette.spark
package errors

/** The errors of writing journals: the sink's columns and rows, journals it cannot write, and
  * the output modes and triggers it does not take; in real-time mode, rows whose origin cannot
  * make their writes exactly once.
  */
private[errors] trait WriteErrors {

  private[spark] def rowJournalNotTargeted(journal: String, row: Long, partition: Int, journals: Seq[String])
      : GazetteIllegalArgumentException =
    GazetteIllegalArgumentException(
      "GAZETTE_UNKNOWN_JOURNAL.NOT_AMONG_SINK_JOURNALS",
      Map("journal" -> journal, "row" -> row.toString, "partition" -> partition.toString,
        "journals" -> journals.mkString(", "))
    )

  private[spark] def unwritableFraming(journal: String, problem: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_UNSUPPORTED_FRAMING.WRITE", Map("journal" -> journal, "reason" -> problem))

  /** Journals that rows were sent to and that cannot be written: each with its number of rows and why. */
  private[spark] def unwritableJournals(journals: Seq[(String, Long, String)]): GazetteIllegalStateException =
    GazetteIllegalStateException(
      "GAZETTE_UNSUPPORTED_FRAMING.WRITE_ROWS",
      Map(
        "journals" -> journals.map(_._1).mkString(", "),
        "unwritable" -> journals.map { case (j, rows, why) => s"Journal $j cannot be written ($rows rows): $why" }
          .mkString("; ")
      )
    )

  private[spark] def journalDeletedDuringWrite(journal: String, epoch: String): GazetteIllegalStateException =
    GazetteIllegalStateException("GAZETTE_JOURNAL_DELETED_DURING_WRITE", Map("journal" -> journal, "epoch" -> epoch))

  private[spark] def extraColumn(column: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_SINK_INVALID_COLUMNS.EXTRA_COLUMN", Map("column" -> column))

  private[spark] def columnType(column: String, expected: String, actual: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_SINK_INVALID_COLUMNS.COLUMN_TYPE",
      Map("column" -> column, "expected" -> expected, "dataType" -> actual))

  private[spark] def valueColumnNeeded(journal: String, contentType: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_SINK_INVALID_COLUMNS.VALUE_NEEDED",
      Map("journal" -> journal, "contentType" -> contentType))

  private[spark] def notWritableAsJson(dataType: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_SINK_INVALID_COLUMNS.NOT_WRITABLE_AS_JSON", Map("dataType" -> dataType))

  private[spark] def realTimeOriginNeeded(): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_SINK_INVALID_COLUMNS.ORIGIN_NEEDED", Map("column" -> "origin"))

  private[spark] def nullValue(row: Long, partition: Int): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_SINK_INVALID_ROW.NULL_VALUE", at(row, partition))

  private[spark] def unframableRow(row: Long, partition: Int, journal: String, problem: String, cause: Throwable)
      : GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_SINK_INVALID_ROW.UNFRAMABLE",
      at(row, partition) ++ Map("journal" -> journal, "reason" -> problem), cause)

  private[spark] def csvWidth(journal: String, row: Long, partition: Int, fields: Int, expected: Int)
      : GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_SINK_INVALID_ROW.CSV_WIDTH",
      at(row, partition) ++ Map("journal" -> journal, "fields" -> fields.toString, "expected" -> expected.toString))

  private[spark] def invalidOrigin(row: Long, partition: Int, uuid: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_SINK_INVALID_ROW.ORIGIN_NOT_UUID", at(row, partition) + ("uuid" -> uuid))

  private[spark] def originNotReadInTask(row: Long, partition: Int, journal: String): GazetteIllegalStateException =
    GazetteIllegalStateException("GAZETTE_SINK_INVALID_ROW.ORIGIN_NOT_READ_IN_TASK",
      at(row, partition) + ("journal" -> journal))

  private[spark] def originReadTwiceInTask(row: Long, partition: Int, journal: String): GazetteIllegalStateException =
    GazetteIllegalStateException("GAZETTE_SINK_INVALID_ROW.ORIGIN_READ_TWICE_IN_TASK",
      at(row, partition) + ("journal" -> journal))

  private[spark] def realTimeRandomMapping(): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException(
      "GAZETTE_CONFLICTING_OPTIONS.RANDOM_MAPPING_IN_REAL_TIME", Map("option" -> "mapping"))

  private[spark] def completeMode(): GazetteUnsupportedOperationException =
    GazetteUnsupportedOperationException("GAZETTE_UNSUPPORTED_OUTPUT_MODE", Map("outputMode" -> "complete"))

  private[spark] def continuousProcessing(): GazetteUnsupportedOperationException =
    GazetteUnsupportedOperationException("GAZETTE_UNSUPPORTED_TRIGGER.CONTINUOUS", Map("trigger" -> "Continuous"))

  private def at(row: Long, partition: Int): Map[String, String] =
    Map("row" -> row.toString, "partition" -> partition.toString)
}
