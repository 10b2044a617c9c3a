package io.sparkgazette.spark
package errors

import io.sparkgazette.client.{
  BrokerStatusException, BrokerUnavailableException, GazetteException => ClientException, StoreUnavailableException
}

/** Every error the connector reports to users, worded in one place: each names what was wrong
  * and where (option, journal, offset), and how to proceed where there is a way. Each carries a
  * stable condition from [[conditions]] (see [[GazetteThrowable]]); protobuf decoding words its
  * own, in [[protobuf.ProtobufErrors]].
  */
object GazetteErrors {

  /** A situation a user would handle in its own way: its name, SQLSTATE and meaning. */
  private final case class Condition(name: String, sqlState: String, meaning: String)

  private val UnknownOption = Condition(
    "GAZETTE_UNKNOWN_OPTION",
    "42616",
    "An option the connector does not know, given to a read or write or set for the session " +
      "(`spark.datasource.gazette.*`); the message lists the known options."
  )
  private val MissingOption = Condition("GAZETTE_MISSING_OPTION", "42601",
    "A required option is not set, such as `broker`, `selector` or `journals`, or the sink's `checkpointLocation`.")
  private val InvalidOption = Condition(
    "GAZETTE_INVALID_OPTION",
    "22023",
    "An option's value cannot be used; the message names the option, its value (never a secret's) and what it expects."
  )
  private val ConflictingOptions = Condition("GAZETTE_CONFLICTING_OPTIONS", "42613",
    "Two options that exclude each other are both set.")
  private val NoJournals = Condition("GAZETTE_NO_JOURNALS", "42704",
    "The sink's `selector` matches no journal.")
  private val UnknownJournal = Condition(
    "GAZETTE_UNKNOWN_JOURNAL",
    "42704",
    "A journal named by an option, by a row's `journal` column or to an admin helper does not exist, or is not " +
      "among the query's journals."
  )
  private val OffsetPastWriteHead = Condition("GAZETTE_OFFSET_PAST_WRITE_HEAD", "22003",
    "`startingOffsets` or `endingOffsets` gives a journal an offset past its write head.")
  private val NoMessageAtTime = Condition(
    "GAZETTE_NO_MESSAGE_AT_TIME",
    "22000",
    "A journal has no message published at or after the time a timestamp option gives; " +
      "`startingOffsetsByTimestampStrategy` `latest` starts such journals at their write head."
  )
  private val JournalSuspended = Condition("GAZETTE_JOURNAL_SUSPENDED", "55000",
    "A suspended journal (no replica serves reads) cannot be searched for the first message at or after a time.")
  private val JournalUnavailable = Condition(
    "GAZETTE_JOURNAL_UNAVAILABLE",
    "KD010",
    "A journal's brokers did not serve bytes the query needs in time (fragments not yet readable, a lagging " +
      "replica); the query can run again later."
  )
  private val JournalDeletedDuringWrite = Condition(
    "GAZETTE_JOURNAL_DELETED_DURING_WRITE",
    "40000",
    "A journal was deleted (or deleted and created again) while an epoch was written to it; nothing of the epoch " +
      "was committed, and it runs again when the query restarts."
  )
  private val UnsupportedFraming = Condition("GAZETTE_UNSUPPORTED_FRAMING", "0A000",
    "A journal's content-type is not one the connector reads or writes.")
  private val DataLoss = Condition(
    "GAZETTE_DATA_LOSS",
    "22000",
    "Bytes the query needs are gone from a journal (fragments removed, the journal deleted or recreated); " +
      "source option `failOnDataLoss` `false` skips and counts them."
  )
  private val MalformedMessage = Condition(
    "GAZETTE_MALFORMED_MESSAGE",
    "22000",
    "A message read from a journal is not well formed for the journal's framing; source option " +
      "`failOnMalformed` `false` skips and counts such messages."
  )
  private val InvalidSchema = Condition(
    "GAZETTE_INVALID_SCHEMA",
    "42K09",
    "The schema given to the source (`.schema(...)`) cannot type its rows: a field named like the connector's " +
      "struct `_gazette`, a field given twice, or a corrupt-record column that is not a string."
  )
  private val SinkInvalidColumns = Condition(
    "GAZETTE_SINK_INVALID_COLUMNS",
    "42K09",
    "The sink's input columns cannot be written: a column besides `value`, `journal`, `key` and `origin`, a column " +
      "of the wrong type, rows without `value` for a journal that is not ndjson, or a real-time exactly-once write " +
      "without `origin`."
  )
  private val SinkInvalidRow = Condition(
    "GAZETTE_SINK_INVALID_ROW",
    "22000",
    "A row cannot be written to its journal: its value is null, or not a record of the journal's framing " +
      "(JSON, CSV as wide as the journal's records); or, in real-time mode, its `origin` is not a UUID, or names a " +
      "journal that no Gazette source read in the row's task (a shuffle came between them) or that two sources read " +
      "there."
  )
  private val UnsupportedOutputMode = Condition("GAZETTE_UNSUPPORTED_OUTPUT_MODE", "0A000",
    "Complete output mode, or an overwrite, was asked of the sink: journals are append-only.")
  private val UnsupportedTrigger = Condition(
    "GAZETTE_UNSUPPORTED_TRIGGER",
    "0A000",
    "Continuous processing (`Trigger.Continuous`) was asked of the sink, which commits whole micro-batches; " +
      "real-time mode (`realTimePartitions`) of a Spark without it; or real-time mode with options that limit " +
      "micro-batches (`maxBytesPerTrigger`, `minBytesPerTrigger`, `maxTriggerDelay`, `minPartitions`)."
  )
  private val CheckpointUnsupportedFormat = Condition("GAZETTE_CHECKPOINT_UNSUPPORTED_FORMAT", "KD002",
    "The checkpoint's source state is in a format this version of the connector does not read.")
  private val CheckpointCorrupt = Condition(
    "GAZETTE_CHECKPOINT_CORRUPT",
    "55019",
    "The checkpoint lacks, or holds damaged, files the connector wrote (source states, offsets, staged runs); " +
      "restore it, or start the query with a new checkpoint location."
  )
  private val CheckpointNotShared = Condition("GAZETTE_CHECKPOINT_NOT_SHARED", "42K03",
    "The checkpoint (or staging) location is not on a file system that the driver and every executor share.")
  private val CheckpointWriteFailed = Condition("GAZETTE_CHECKPOINT_WRITE_FAILED", "58030",
    "A file could not be saved in the checkpoint location, or a sink's run staged in its staging location.")
  private val InvalidJournalSpec = Condition("GAZETTE_INVALID_JOURNAL_SPEC", "22023",
    "A journal spec given to the admin helpers (`apply_specs`) cannot be used.")
  private val BrokerUnavailable = Condition(
    "GAZETTE_BROKER_UNAVAILABLE",
    "08001",
    "No broker serving a journal could be reached within the retry budget (`retryTimeout`); the message names " +
      "the RPC, the journal and the broker."
  )
  private val FragmentStoreUnavailable = Condition(
    "GAZETTE_FRAGMENT_STORE_UNAVAILABLE",
    "08001",
    "A journal's fragment store failed or stopped answering, and its brokers could not serve the fragment from it " +
      "either, within the retry budget (`retryTimeout`); the message names the journal, the store and its last error."
  )
  private val BrokerRefused = Condition(
    "GAZETTE_BROKER_REFUSED",
    "58000",
    "A broker answered an RPC with a status that retrying does not change (parameter `status`: e.g. " +
      "JOURNAL_NOT_FOUND, NOT_ALLOWED, SUSPENDED, FRAGMENT_STORE_UNHEALTHY), or an RPC failed for good."
  )
  private val Internal = Condition("GAZETTE_INTERNAL_ERROR", "XX000",
    "Something the connector relies on does not hold: a bug to report, with the message.")

  private val all: Seq[Condition] = Seq(
    UnknownOption,
    MissingOption,
    InvalidOption,
    ConflictingOptions,
    NoJournals,
    UnknownJournal,
    OffsetPastWriteHead,
    NoMessageAtTime,
    JournalSuspended,
    JournalUnavailable,
    JournalDeletedDuringWrite,
    UnsupportedFraming,
    DataLoss,
    MalformedMessage,
    InvalidSchema,
    SinkInvalidColumns,
    SinkInvalidRow,
    UnsupportedOutputMode,
    UnsupportedTrigger,
    CheckpointUnsupportedFormat,
    CheckpointCorrupt,
    CheckpointNotShared,
    CheckpointWriteFailed,
    InvalidJournalSpec,
    BrokerUnavailable,
    FragmentStoreUnavailable,
    BrokerRefused,
    Internal
  )

  /** Every condition the connector's errors carry, with what it means: the reference page's table. */
  private[spark] val conditions: Seq[(String, String)] =
    all.map(c => c.name -> c.meaning)

  private[spark] val InternalErrorCondition: String = Internal.name

  private def argument(c: Condition, message: String, parameters: (String, String)*): GazetteIllegalArgumentException =
    new GazetteIllegalArgumentException(c.name, c.sqlState, parameters.toMap, message)

  private def state(c: Condition, message: String, parameters: (String, String)*): GazetteIllegalStateException =
    new GazetteIllegalStateException(c.name, c.sqlState, parameters.toMap, message)

  private def unsupported(c: Condition, message: String, parameters: (String, String)*)
      : GazetteUnsupportedOperationException =
    new GazetteUnsupportedOperationException(c.name, c.sqlState, parameters.toMap, message)

  /** Options whose values are never shown: in errors they read as redacted. */
  private val SecretOptions = Set("authtoken")

  private def secret(option: String): Boolean = SecretOptions.contains(option.toLowerCase(java.util.Locale.ROOT))

  private val Redacted = "*********(redacted)"

  def unknownOption(name: String, known: Iterable[String]): GazetteIllegalArgumentException = {
    val listed = known.toSeq.sorted.mkString(", ")
    val hint = closest(name, known).fold("")(c => s" Did you mean '$c'?")
    argument(UnknownOption, s"Unknown Gazette option '$name'.$hint Known options: $listed", "option" -> name,
      "knownOptions" -> listed)
  }

  /** The known option `name` is most likely a misspelling of: at most two edits away, ignoring case. */
  private[spark] def closest(name: String, known: Iterable[String]): Option[String] = {
    def distance(a: String, b: String): Int = {
      val (x, y) = (a.toLowerCase(java.util.Locale.ROOT), b.toLowerCase(java.util.Locale.ROOT))
      var row = Array.tabulate(y.length + 1)(identity)
      for (i <- 1 to x.length) {
        val next = new Array[Int](y.length + 1)
        next(0) = i
        for (j <- 1 to y.length)
          next(j) = math.min(math.min(next(j - 1), row(j)) + 1, row(j - 1) + (if (x(i - 1) == y(j - 1)) 0 else 1))
        row = next
      }
      row(y.length)
    }
    known.toSeq.map(k => k -> distance(name, k)).filter(_._2 <= 2).sortBy { case (k, d) => (d, k) }.headOption.map(_._1)
  }

  def unknownSessionOption(name: String, sessionConf: String, known: Iterable[String])
      : GazetteIllegalArgumentException = {
    val listed = known.toSeq.sorted.mkString(", ")
    argument(
      UnknownOption,
      s"Unknown Gazette option '$name', set for the whole session as $sessionConf. Known options: $listed",
      "option" -> name,
      "sessionConf" -> sessionConf,
      "knownOptions" -> listed
    )
  }

  def missingOption(name: String, why: String): GazetteIllegalArgumentException =
    argument(MissingOption, s"Gazette option '$name' is required: $why", "option" -> name, "reason" -> why)

  /** A read or write whose options name no journals, and no option says which of the two it is. */
  def missingTarget(): GazetteIllegalArgumentException =
    argument(
      MissingOption,
      "Gazette options name no journals: give 'selector' or 'journals' to read, or 'journal' (or save(journal)) " +
        "or 'selector' to write",
      "option" -> "selector",
      "alternative" -> "journals, journal"
    )

  /** Neither of two options that say the same thing in different ways is set. */
  def missingOneOf(name: String, alternative: String, why: String): GazetteIllegalArgumentException =
    argument(MissingOption, s"Gazette option '$name' or '$alternative' is required: $why",
      "option" -> name, "alternative" -> alternative, "reason" -> why)

  def invalidOption(name: String, value: String, expected: String): GazetteIllegalArgumentException =
    if (secret(name)) invalidSecret(name, expected)
    else argument(InvalidOption, s"Gazette option '$name' has invalid value '$value': expected $expected",
      "option" -> name, "value" -> value, "expected" -> expected)

  def invalidSecret(name: String, expected: String): GazetteIllegalArgumentException =
    argument(InvalidOption, s"Gazette option '$name' has an invalid value (not shown): expected $expected",
      "option" -> name, "value" -> Redacted, "expected" -> expected)

  def conflictingOptions(a: String, b: String): GazetteIllegalArgumentException =
    argument(ConflictingOptions, s"Gazette options '$a' and '$b' cannot be used together; give one of them",
      "option" -> a, "otherOption" -> b)

  def noJournals(target: String): GazetteIllegalStateException =
    state(NoJournals, s"No Gazette journals match $target", "target" -> target)

  def unknownJournal(journal: String, option: String): GazetteIllegalArgumentException =
    argument(UnknownJournal, s"Journal '$journal' named in option '$option' does not exist or is not selected",
      "journal" -> journal, "option" -> option)

  /** `journal`, which the user named (in `option`, if through one), is not listed by the brokers. */
  def missingJournal(journal: String, option: Option[String]): GazetteIllegalArgumentException =
    argument(UnknownJournal, s"Journal '$journal'${option.fold("")(o => s" (option '$o')")} does not exist",
      Seq("journal" -> journal) ++ option.map("option" -> _): _*)

  def rowJournalNotTargeted(journal: String, row: Long, partition: Int, journals: Seq[String])
      : GazetteIllegalArgumentException =
    argument(
      UnknownJournal,
      s"Row $row of partition $partition names journal '$journal', which is not among the sink's " +
        s"journals ${journals.mkString(", ")}",
      "journal" -> journal,
      "row" -> row.toString,
      "partition" -> partition.toString
    )

  def unsupportedFraming(journal: String, problem: String): GazetteIllegalStateException =
    state(UnsupportedFraming, s"Journal $journal cannot be read: $problem", "journal" -> journal, "reason" -> problem)

  def unwritableFraming(journal: String, problem: String): GazetteIllegalArgumentException =
    argument(
      UnsupportedFraming, s"Journal $journal cannot be written: $problem", "journal" -> journal, "reason" -> problem)

  def unwritableJournals(journals: Seq[(String, Long, String)]): GazetteIllegalStateException =
    state(
      UnsupportedFraming,
      journals.map { case (j, rows, why) => s"Journal $j cannot be written ($rows rows): $why" }
        .mkString("; ") +
        ". Give the journals a content-type the sink can write, or send no rows there (option 'selector', " +
        "or the 'journal' column)",
      "journals" -> journals.map(_._1).mkString(", ")
    )

  def dataLoss(journal: String, what: String): GazetteIllegalStateException =
    state(
      DataLoss,
      s"Data loss in journal $journal: $what. Some messages may have been missed. If you want the query to " +
        "continue anyway (skipping what is gone and counting it), set the source option 'failOnDataLoss' to 'false'.",
      "journal" -> journal,
      "reason" -> what
    )

  def malformedMessage(journal: String, begin: Long, end: Long, reason: String, cause: Throwable)
      : GazetteIllegalStateException =
    new GazetteIllegalStateException(
      MalformedMessage.name,
      MalformedMessage.sqlState,
      Map("journal" -> journal, "offset" -> begin.toString, "reason" -> reason),
      s"Malformed message in journal $journal at offset $begin (${end - begin} bytes): $reason. To skip such messages " +
        "(counted in the metric malformedMessagesSkipped), set the source option 'failOnMalformed' to 'false'.",
      cause
    )

  def invalidSchema(problem: String): GazetteIllegalArgumentException =
    argument(InvalidSchema, s"The source's schema cannot be used: $problem", "reason" -> problem)

  def missingSequencerState(journal: String, offset: Long, dir: String): GazetteIllegalStateException =
    state(
      CheckpointCorrupt,
      s"Sequencer state of journal $journal at offset $offset is missing from $dir, although other states of the " +
        "journal exist there: the checkpoint is incomplete. Restore it, or start the query with a new checkpoint.",
      "journal" -> journal,
      "offset" -> offset.toString,
      "path" -> dir
    )

  def unsupportedStateFormat(where: String, version: Option[Int], readable: Int): GazetteIllegalStateException =
    state(
      CheckpointUnsupportedFormat,
      s"Sequencer state $where is ${version.map(v => s"in format version $v").getOrElse("not in a format this connector reads")}; " +
        s"this version of the connector reads format $readable. Run the query with the " +
        "connector version that wrote the checkpoint, or start it with a new checkpoint location.",
      Seq("path" -> where, "expectedVersion" -> readable.toString) ++
        version.map(v => "version" -> v.toString): _*
    )

  /** The source's offsets in the checkpoint (Spark's offset log, the initial offsets) are not an object. */
  def offsetsNotAnObject(json: String): GazetteIllegalArgumentException =
    argument(CheckpointCorrupt, s"expected a JSON object of journal offsets, got: $json", "offsets" -> json)

  def offsetNotWhole(journal: String, what: String, value: String): GazetteIllegalArgumentException =
    argument(CheckpointCorrupt, s"$what of journal $journal is not a whole number: $value",
      "journal" -> journal, "field" -> what, "value" -> value)

  def stagedRunDamaged(journal: String, path: String, length: Long, expected: Long): GazetteIllegalStateException =
    state(
      CheckpointCorrupt,
      s"The staged run of journal $journal at $path is " +
        (if (length < 0) "missing" else s"$length bytes long, not $expected") + ": its messages were recorded as " +
        "committed and cannot be published. Was the checkpoint location modified?",
      "journal" -> journal,
      "path" -> path
    )

  def checkpointNotVisible(journal: String, dir: String, host: String): GazetteIllegalStateException =
    state(
      CheckpointNotShared,
      s"The source's checkpoint $dir cannot be seen from executor host $host (reading journal $journal): the " +
        "driver wrote it, but this host finds nothing there. Use a checkpointLocation every host of the cluster " +
        "reads and writes (HDFS, an object store, a shared mount), not a directory of the driver's own disk.",
      "journal" -> journal,
      "path" -> dir,
      "host" -> host
    )

  def stagedRunNotVisible(journal: String, path: String, location: String, option: String)
      : GazetteIllegalStateException =
    state(
      CheckpointNotShared,
      s"The staged run of journal $journal that a task wrote at $path cannot be seen " +
        s"from the driver: $option $location must be on a file system that the driver and every " +
        "executor share (HDFS, an object store, a shared mount). Nothing of this write was committed.",
      "journal" -> journal,
      "path" -> path,
      option -> location
    )

  def stagingUnwritable(setting: String, location: String, path: String, cause: Throwable)
      : GazetteIllegalStateException =
    new GazetteIllegalStateException(
      CheckpointWriteFailed.name,
      CheckpointWriteFailed.sqlState,
      Map("path" -> path, setting -> location),
      s"Cannot stage the sink's runs at $path ($cause): $setting $location must be a directory that the driver " +
        "and every executor can write. Nothing of this write was committed.",
      cause
    )

  def checkpointWriteFailed(what: String, path: String): GazetteIllegalStateException =
    state(CheckpointWriteFailed, s"Cannot save $what at $path", "path" -> path)

  def endPastWriteHead(journal: String, end: Long, head: Long): GazetteIllegalArgumentException =
    argument(
      OffsetPastWriteHead,
      s"Option 'endingOffsets' asks for journal $journal up to offset $end, past its write head $head",
      "option" -> "endingOffsets",
      "journal" -> journal,
      "offset" -> end.toString,
      "writeHead" -> head.toString
    )

  def startPastWriteHead(journal: String, start: Long, head: Long): GazetteIllegalArgumentException =
    argument(
      OffsetPastWriteHead,
      s"Option 'startingOffsets' starts journal $journal at offset $start, past its write head $head",
      "option" -> "startingOffsets",
      "journal" -> journal,
      "offset" -> start.toString,
      "writeHead" -> head.toString
    )

  def noMessageAtTime(journal: String, epochMillis: Long, writeHead: Long, option: String)
      : GazetteIllegalArgumentException =
    argument(
      NoMessageAtTime,
      s"Journal $journal has no message published at or after ${java.time.Instant.ofEpochMilli(epochMillis)} ($epochMillis, " +
        s"option '$option') up to its write head $writeHead. Set 'startingOffsetsByTimestampStrategy' to " +
        "'latest' to start such journals at their write head, or give an earlier time",
      "journal" -> journal,
      "option" -> option,
      "timestamp" -> epochMillis.toString,
      "writeHead" -> writeHead.toString
    )

  def suspendedAtTime(journal: String, option: String): GazetteIllegalStateException =
    state(
      JournalSuspended,
      s"Journal $journal is suspended (no replica serves reads), so option '$option' cannot find its first message at " +
        "or after a time. Resume it (an append does), or leave it out of the option's journals",
      "journal" -> journal,
      "option" -> option
    )

  def timeSearchCutShort(journal: String, epochMillis: Long, reached: Long, head: Long): GazetteIllegalStateException =
    state(
      JournalUnavailable,
      s"Searching journal $journal for ${java.time.Instant.ofEpochMilli(epochMillis)}: its read ended at offset $reached, " +
        s"before its write head $head (fragments not yet readable?). Try again later.",
      "journal" -> journal,
      "offset" -> reached.toString,
      "writeHead" -> head.toString
    )

  def readCutShort(journal: String, offset: Long, start: Long, end: Long): GazetteIllegalStateException =
    state(
      JournalUnavailable,
      s"journal $journal: reads end at offset $offset, before the bytes this batch needs (range [$start, $end)); " +
        "the journal's brokers did not serve them in time",
      "journal" -> journal,
      "offset" -> offset.toString
    )

  def journalDeletedDuringWrite(journal: String, epoch: String): GazetteIllegalStateException =
    state(
      JournalDeletedDuringWrite,
      s"Journal $journal was deleted while $epoch was written to it: " +
        "nothing of it was committed: a stream runs it again when it restarts, a batch job when it is run again",
      "journal" -> journal,
      "epoch" -> epoch
    )

  def extraColumn(column: String): GazetteIllegalArgumentException =
    argument(
      SinkInvalidColumns,
      s"Column '$column' cannot be written to Gazette alongside 'value': the sink takes 'value' " +
        "(string or binary), and optionally 'journal' (string) and 'key' (string or binary)",
      "column" -> column
    )

  def columnType(column: String, expected: String, actual: String): GazetteIllegalArgumentException =
    argument(SinkInvalidColumns, s"Column '$column' must be $expected, not $actual",
      "column" -> column, "expected" -> expected, "dataType" -> actual)

  def valueColumnNeeded(journal: String, contentType: String): GazetteIllegalArgumentException =
    argument(SinkInvalidColumns, s"Journal $journal is $contentType: rows need a 'value' column",
      "journal" -> journal, "contentType" -> contentType)

  def notWritableAsJson(dataType: String): GazetteIllegalArgumentException =
    argument(SinkInvalidColumns, s"cannot write a column of type $dataType as JSON", "dataType" -> dataType)

  def nullValue(row: Long, partition: Int): GazetteIllegalArgumentException =
    argument(SinkInvalidRow, s"Row $row of partition $partition has a null value", "row" -> row.toString,
      "partition" -> partition.toString)

  def unframableRow(row: Long, partition: Int, journal: String, problem: String, cause: Throwable)
      : GazetteIllegalArgumentException =
    new GazetteIllegalArgumentException(
      SinkInvalidRow.name,
      SinkInvalidRow.sqlState,
      Map("row" -> row.toString, "partition" -> partition.toString, "journal" -> journal, "reason" -> problem),
      s"Row $row of partition $partition cannot be written to $journal: $problem",
      cause
    )

  def csvWidth(journal: String, row: Long, partition: Int, fields: Int, expected: Int)
      : GazetteIllegalArgumentException =
    argument(
      SinkInvalidRow,
      s"Row $row of partition $partition has $fields CSV fields, but the records of journal " +
        s"$journal have $expected after their UUID column: every record of a CSV journal is as wide as its first",
      "journal" -> journal,
      "row" -> row.toString,
      "partition" -> partition.toString,
      "fields" -> fields.toString,
      "expected" -> expected.toString
    )

  def completeMode(): GazetteUnsupportedOperationException =
    unsupported(
      UnsupportedOutputMode,
      "Gazette journals are append-only: complete output mode (and overwrite) cannot " +
        "replace what was written. Use append or update output mode.",
      "outputMode" -> "complete"
    )

  def continuousProcessing(): GazetteUnsupportedOperationException =
    unsupported(
      UnsupportedTrigger,
      "The Gazette sink does not support continuous processing (Trigger.Continuous): " +
        "it commits whole epochs through the driver. Use a micro-batch trigger, e.g. Trigger.ProcessingTime(\"1 second\")",
      "trigger" -> "Continuous"
    )

  def realTimeOriginNeeded(): GazetteIllegalArgumentException =
    argument(
      SinkInvalidColumns,
      "In real-time mode (Trigger.RealTime) an exactly-once write needs each row's origin, the input message it " +
        "was made from: a column 'origin' of type struct<journal: string, uuid: string>, e.g. " +
        "struct(journal, uuid) AS origin over the Gazette source's columns. Or set option " +
        s"'deliveryGuarantee' to 'at-least-once'",
      "column" -> "origin"
    )

  def originNotReadInTask(row: Long, partition: Int, journal: String): GazetteIllegalStateException =
    state(
      SinkInvalidRow,
      s"Row $row of partition $partition has origin journal $journal, which no Gazette source reads in the same " +
        "task. A real-time exactly-once write derives each row's UUID from its origin, which needs the row made in " +
        "the task that read its origin, in order: a stateless query from the Gazette source to the sink, with no " +
        "shuffle (repartition, aggregation, dropDuplicates, join) between them. Or set option " +
        s"'deliveryGuarantee' to 'at-least-once'",
      "row" -> row.toString,
      "partition" -> partition.toString,
      "journal" -> journal
    )

  def realTimeRandomMapping(): GazetteIllegalArgumentException =
    argument(
      ConflictingOptions,
      s"Option 'mapping' 'random' cannot be exactly once in real-time mode: a batch run again " +
        "would send a row to another journal than its first run did. Give rows a 'key' column, or leave " +
        "'mapping' unset (rows are then placed by their origin)",
      "option" -> "mapping"
    )

  def originReadTwiceInTask(row: Long, partition: Int, journal: String): GazetteIllegalStateException =
    state(
      SinkInvalidRow,
      s"Row $row of partition $partition has origin journal $journal, which two Gazette sources of the query read " +
        "in the same task: a real-time exactly-once write cannot tell which source's message the row came from. " +
        "Keep the sources' rows apart (no coalesce of their union), or read the journal once",
      "row" -> row.toString,
      "partition" -> partition.toString,
      "journal" -> journal
    )

  def invalidOrigin(row: Long, partition: Int, uuid: String): GazetteIllegalArgumentException =
    argument(
      SinkInvalidRow,
      s"Row $row of partition $partition has origin UUID '$uuid', which is not a UUID: the 'origin' column takes " +
        "the Gazette source's 'journal' and 'uuid' columns",
      "row" -> row.toString,
      "partition" -> partition.toString,
      "uuid" -> uuid
    )

  def realTimeCheckpointInMicroBatches(): GazetteUnsupportedOperationException =
    unsupported(
      UnsupportedTrigger,
      "The query's checkpoint was last run in real-time mode (Trigger.RealTime), whose batches keep the " +
        "producers' states in their offsets; micro-batches cannot continue it exactly once. Run it with " +
        "Trigger.RealTime, or start the micro-batch query from a new checkpoint.",
      "trigger" -> "MicroBatch"
    )

  def realTimeModeUnavailable(sparkVersion: String): GazetteUnsupportedOperationException =
    unsupported(
      UnsupportedTrigger,
      s"The Gazette source was given option 'realTimePartitions', for real-time mode " +
        s"(Trigger.RealTime), but Spark $sparkVersion has no real-time mode (Spark 4.1 or newer has it). Remove the " +
        "option, or run the query on a newer Spark.",
      "trigger" -> "RealTime"
    )

  def microBatchLimitsInRealTime(options: Seq[String]): GazetteUnsupportedOperationException =
    unsupported(
      UnsupportedTrigger,
      s"Source option(s) ${options.map(o => s"'$o'").mkString(", ")} limit micro-batches, and real-time mode " +
        "(Trigger.RealTime) has none to limit: its batches read until their time is up. Remove the option(s), or " +
        "run the query with a micro-batch trigger.",
      "trigger" -> "RealTime",
      "options" -> options.mkString(", ")
    )

  def invalidJournalSpec(journal: String, field: String, value: String, expected: String)
      : GazetteIllegalArgumentException =
    argument(
      InvalidJournalSpec,
      s"Journal spec of '$journal' has invalid $field '$value': expected $expected",
      "journal" -> journal,
      "field" -> field,
      "value" -> value,
      "expected" -> expected
    )

  /** What the connector itself should have made impossible. */
  /** The client's retries found no broker of a journal: its message (RPC, journal, broker) under a condition. */
  def brokerUnavailable(e: BrokerUnavailableException): GazetteIllegalStateException = e match {
    case s: StoreUnavailableException => storeUnavailable(s)
    case _ =>
      new GazetteIllegalStateException(BrokerUnavailable.name, BrokerUnavailable.sqlState,
        Map("rpc" -> e.rpc, "journal" -> e.journal, "broker" -> e.endpoint), e.getMessage, e)
  }

  /** A fragment neither its store nor a broker served: its message (journal, store, last error) under a condition. */
  def storeUnavailable(e: StoreUnavailableException): GazetteIllegalStateException =
    new GazetteIllegalStateException(
      FragmentStoreUnavailable.name,
      FragmentStoreUnavailable.sqlState,
      Map("rpc" -> e.rpc, "journal" -> e.journal, "broker" -> e.endpoint, "store" -> e.store),
      e.getMessage,
      e
    )

  /** An RPC the client gave up on for another reason: a broker's status, or a failure for good. */
  def brokerRefused(e: ClientException): GazetteIllegalStateException = e match {
    case s: BrokerStatusException =>
      new GazetteIllegalStateException(BrokerRefused.name, BrokerRefused.sqlState,
        Map("rpc" -> s.rpc, "journal" -> s.journal, "broker" -> s.endpoint, "status" -> s.status.name), s.getMessage, s)
    case other =>
      new GazetteIllegalStateException(BrokerRefused.name, BrokerRefused.sqlState, Map.empty, other.getMessage, other)
  }

  /** Runs `body`, a call Spark makes of the connector, raising the client's errors under their
    * conditions: below this boundary they keep their own types, which the connector's retries
    * and recoveries match.
    */
  def brokerCalls[T](body: => T): T =
    try body
    catch {
      case e: BrokerUnavailableException => throw brokerUnavailable(e)
      case e: ClientException => throw brokerRefused(e)
    }

  def internal(message: String): GazetteIllegalStateException = state(Internal, message)

  /** Options as a plan or a log shows them: secrets (authToken) redacted. */
  def describe(options: Map[String, String]): String =
    options.toSeq.sorted.map { case (k, v) => s"$k=${if (secret(k)) Redacted else v}" }.mkString(", ")
}
