package io.sparkgazette.spark
package errors

import java.time.Instant

/** The errors of reading journals: where a read starts and ends, bytes that are gone or late,
  * messages that cannot be read, and what the source's schema and trigger allow.
  */
private[errors] trait ReadErrors {

  private[spark] def startPastWriteHead(journal: String, start: Long, head: Long): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_OFFSET_PAST_WRITE_HEAD.STARTING",
      Map(
        "option" -> "startingOffsets", "journal" -> journal, "offset" -> start.toString, "writeHead" -> head.toString))

  private[spark] def endPastWriteHead(journal: String, end: Long, head: Long): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_OFFSET_PAST_WRITE_HEAD.ENDING",
      Map("option" -> "endingOffsets", "journal" -> journal, "offset" -> end.toString, "writeHead" -> head.toString))

  private[spark] def noMessageAtTime(journal: String, epochMillis: Long, writeHead: Long, option: String)
      : GazetteIllegalArgumentException =
    GazetteIllegalArgumentException(
      "GAZETTE_NO_MESSAGE_AT_TIME",
      Map(
        "journal" -> journal,
        "option" -> option,
        "timestamp" -> epochMillis.toString,
        "time" -> Instant.ofEpochMilli(epochMillis).toString,
        "writeHead" -> writeHead.toString
      )
    )

  private[spark] def suspendedAtTime(journal: String, option: String): GazetteIllegalStateException =
    GazetteIllegalStateException("GAZETTE_JOURNAL_SUSPENDED", Map("journal" -> journal, "option" -> option))

  private[spark] def timeSearchCutShort(journal: String, epochMillis: Long, reached: Long, head: Long)
      : GazetteIllegalStateException =
    GazetteIllegalStateException(
      "GAZETTE_JOURNAL_UNAVAILABLE.TIME_SEARCH",
      Map(
        "journal" -> journal,
        "time" -> Instant.ofEpochMilli(epochMillis).toString,
        "offset" -> reached.toString,
        "writeHead" -> head.toString
      )
    )

  private[spark] def readCutShort(journal: String, offset: Long, start: Long, end: Long): GazetteIllegalStateException =
    GazetteIllegalStateException("GAZETTE_JOURNAL_UNAVAILABLE.READ",
      Map("journal" -> journal, "offset" -> offset.toString, "start" -> start.toString, "end" -> end.toString))

  private[spark] def unsupportedFraming(journal: String, problem: String): GazetteIllegalStateException =
    GazetteIllegalStateException("GAZETTE_UNSUPPORTED_FRAMING.READ", Map("journal" -> journal, "reason" -> problem))

  private[spark] def dataLoss(journal: String, what: String): GazetteIllegalStateException =
    GazetteIllegalStateException("GAZETTE_DATA_LOSS", Map("journal" -> journal, "reason" -> what))

  private[spark] def malformedMessage(journal: String, begin: Long, end: Long, reason: String, cause: Throwable)
      : GazetteIllegalStateException =
    GazetteIllegalStateException(
      "GAZETTE_MALFORMED_MESSAGE",
      Map("journal" -> journal, "offset" -> begin.toString, "length" -> (end - begin).toString, "reason" -> reason),
      cause
    )

  private[spark] def invalidSchema(problem: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_INVALID_SCHEMA", Map("reason" -> problem))

  private[spark] def realTimeModeUnavailable(sparkVersion: String): GazetteUnsupportedOperationException =
    GazetteUnsupportedOperationException("GAZETTE_UNSUPPORTED_TRIGGER.REAL_TIME_UNAVAILABLE",
      Map("trigger" -> "RealTime", "sparkVersion" -> sparkVersion))

  /** A micro-batch query over a checkpoint whose offsets hold real-time producers' states. */
  private[spark] def realTimeCheckpointInMicroBatches(): GazetteUnsupportedOperationException =
    GazetteUnsupportedOperationException("GAZETTE_UNSUPPORTED_TRIGGER.REAL_TIME_CHECKPOINT_IN_MICRO_BATCHES",
      Map("trigger" -> "MicroBatch"))

  private[spark] def microBatchLimitsInRealTime(options: Seq[String]): GazetteUnsupportedOperationException =
    GazetteUnsupportedOperationException(
      "GAZETTE_UNSUPPORTED_TRIGGER.MICRO_BATCH_LIMITS_IN_REAL_TIME",
      Map(
        "trigger" -> "RealTime",
        "options" -> options.mkString(", "),
        "quotedOptions" -> options.map(o => s"'$o'").mkString(", ")
      )
    )
}
