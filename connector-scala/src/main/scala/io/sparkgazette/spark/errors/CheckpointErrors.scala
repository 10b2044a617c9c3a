package io.sparkgazette.spark
package errors

/** The errors of checkpoints and of the sink's staging: what the connector wrote there is
  * missing, damaged, in another format, out of reach of some host, or could not be written.
  */
private[errors] trait CheckpointErrors {

  private[errors] def missingSequencerState(journal: String, offset: Long, dir: String): GazetteIllegalStateException =
    GazetteIllegalStateException("GAZETTE_CHECKPOINT_CORRUPT.SEQUENCER_STATE_MISSING",
      Map("journal" -> journal, "offset" -> offset.toString, "path" -> dir))

  private[spark] def unsupportedStateFormat(where: String, version: Option[Int], readable: Int)
      : GazetteIllegalStateException = {
    val read = Map("path" -> where, "expectedVersion" -> readable.toString)
    version match {
      case Some(v) =>
        GazetteIllegalStateException("GAZETTE_CHECKPOINT_UNSUPPORTED_FORMAT.OTHER_VERSION",
          read + ("version" -> v.toString))
      case None => GazetteIllegalStateException("GAZETTE_CHECKPOINT_UNSUPPORTED_FORMAT.UNKNOWN_FORMAT", read)
    }
  }

  /** The source's offsets in the checkpoint (Spark's offset log, the initial offsets) are not an object. */
  private[spark] def offsetsNotAnObject(json: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_CHECKPOINT_CORRUPT.OFFSETS_NOT_AN_OBJECT", Map("offsets" -> json))

  private[spark] def offsetNotWhole(journal: String, what: String, value: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_CHECKPOINT_CORRUPT.OFFSET_NOT_WHOLE",
      Map("journal" -> journal, "field" -> what, "value" -> value))

  /** A file of Spark's offset log (`offsets/<batch>`) is not as Spark writes them. */
  private[spark] def offsetLogUnreadable(path: String, problem: String): GazetteIllegalStateException =
    GazetteIllegalStateException("GAZETTE_CHECKPOINT_CORRUPT.OFFSET_LOG_UNREADABLE",
      Map("path" -> path, "problem" -> problem))

  /** A record of the sink's ACK intents is not as the sink writes them (empty, cut short). */
  private[spark] def intentRecordUnreadable(path: String, problem: String): GazetteIllegalStateException =
    GazetteIllegalStateException("GAZETTE_CHECKPOINT_CORRUPT.INTENT_RECORD_UNREADABLE",
      Map("path" -> path, "problem" -> problem))

  /** A staged run is missing (`length` negative) or not as long as it was when it was committed. */
  private[spark] def stagedRunDamaged(journal: String, path: String, length: Long, expected: Long)
      : GazetteIllegalStateException = {
    val run = Map("journal" -> journal, "path" -> path)
    if (length < 0) GazetteIllegalStateException("GAZETTE_CHECKPOINT_CORRUPT.STAGED_RUN_MISSING", run)
    else
      GazetteIllegalStateException("GAZETTE_CHECKPOINT_CORRUPT.STAGED_RUN_CUT",
        run ++ Map("length" -> length.toString, "expected" -> expected.toString))
  }

  private[spark] def checkpointNotVisible(journal: String, dir: String, host: String): GazetteIllegalStateException =
    GazetteIllegalStateException("GAZETTE_CHECKPOINT_NOT_SHARED.SOURCE_CHECKPOINT",
      Map("journal" -> journal, "path" -> dir, "host" -> host))

  /** A run a task staged at `path` is not there for the driver: `location`, given by `option`, is no shared place. */
  private[spark] def stagedRunNotVisible(journal: String, path: String, location: String, option: String)
      : GazetteIllegalStateException =
    GazetteIllegalStateException("GAZETTE_CHECKPOINT_NOT_SHARED.STAGED_RUN",
      Map("journal" -> journal, "path" -> path, "option" -> option, "location" -> location))

  private[spark] def checkpointWriteFailed(what: String, path: String): GazetteIllegalStateException =
    GazetteIllegalStateException("GAZETTE_CHECKPOINT_WRITE_FAILED.SAVE", Map("contents" -> what, "path" -> path))

  /** The sink's runs cannot be staged at `path` under `location`, given by the option `setting`. */
  private[spark] def stagingUnwritable(setting: String, location: String, path: String, cause: Throwable)
      : GazetteIllegalStateException =
    GazetteIllegalStateException(
      "GAZETTE_CHECKPOINT_WRITE_FAILED.STAGING",
      Map("path" -> path, "failure" -> String.valueOf(cause), "option" -> setting, "location" -> location),
      cause
    )

  /** `path` is not the checkpoint location of a streaming query reading journals: `variant` says
    * why (MISSING, NO_OFFSET_LOG, NO_BATCH, NO_GAZETTE_SOURCE) and `found` what is there instead.
    */
  private[spark] def notASourceCheckpoint(variant: String, path: String, found: String = "")
      : GazetteIllegalArgumentException =
    GazetteIllegalArgumentException(s"GAZETTE_NOT_A_SOURCE_CHECKPOINT.$variant", Map("path" -> path, "found" -> found))
}
