package io.sparkgazette.spark

/** Every error the connector reports to users, worded in one place: each names what was wrong
  * and where (option, journal, offset), and how to proceed where there is a way.
  */
object GazetteErrors {

  def unknownOption(name: String, known: Iterable[String]): IllegalArgumentException =
    new IllegalArgumentException(s"Unknown Gazette option '$name'. Known options: ${known.toSeq.sorted.mkString(", ")}")

  def missingOption(name: String, why: String): IllegalArgumentException =
    new IllegalArgumentException(s"Gazette option '$name' is required: $why")

  def invalidOption(name: String, value: String, expected: String): IllegalArgumentException =
    new IllegalArgumentException(s"Gazette option '$name' has invalid value '$value': expected $expected")

  def conflictingOptions(a: String, b: String): IllegalArgumentException =
    new IllegalArgumentException(s"Gazette options '$a' and '$b' cannot be used together; give one of them")

  def noJournals(target: String): IllegalStateException =
    new IllegalStateException(s"No Gazette journals match $target")

  def unknownJournal(journal: String, option: String): IllegalArgumentException =
    new IllegalArgumentException(s"Journal '$journal' named in option '$option' does not exist or is not selected")

  def unsupportedFraming(journal: String, problem: String): IllegalStateException =
    new IllegalStateException(s"Journal $journal cannot be read: $problem")

  def dataLoss(journal: String, what: String): IllegalStateException =
    new IllegalStateException(
      s"Data loss in journal $journal: $what. Some messages may have been missed. If you want the query to " +
        "continue anyway (skipping what is gone and counting it), set the source option 'failOnDataLoss' to 'false'.")

  def missingSequencerState(journal: String, offset: Long, dir: String): IllegalStateException =
    new IllegalStateException(
      s"Sequencer state of journal $journal at offset $offset is missing from $dir, although other states of the " +
        "journal exist there: the checkpoint is incomplete. Restore it, or start the query with a new checkpoint.")

  def unsupportedStateFormat(where: String, version: Option[Int]): IllegalStateException =
    new IllegalStateException(
      s"Sequencer state $where is ${version.map(v => s"in format version $v").getOrElse("not in a format this connector reads")}; " +
        s"this version of the connector reads format ${source.state.SequencerStateFormat.FormatVersion}. Run the query with the " +
        "connector version that wrote the checkpoint, or start it with a new checkpoint location.")

  def checkpointNotVisible(journal: String, dir: String, host: String): IllegalStateException =
    new IllegalStateException(
      s"The source's checkpoint $dir cannot be seen from executor host $host (reading journal $journal): the " +
        "driver wrote it, but this host finds nothing there. Use a checkpointLocation every host of the cluster " +
        "reads and writes (HDFS, an object store, a shared mount), not a directory of the driver's own disk.")

  def endPastWriteHead(journal: String, end: Long, head: Long): IllegalArgumentException =
    new IllegalArgumentException(
      s"Option '${GazetteOptions.EndingOffsets}' asks for journal $journal up to offset $end, past its write head $head")

  def startPastWriteHead(journal: String, start: Long, head: Long): IllegalArgumentException =
    new IllegalArgumentException(
      s"Option '${GazetteOptions.StartingOffsets}' starts journal $journal at offset $start, past its write head $head")

  def noMessageAtTime(journal: String, epochMillis: Long, writeHead: Long, option: String): IllegalArgumentException =
    new IllegalArgumentException(
      s"Journal $journal has no message published at or after ${java.time.Instant.ofEpochMilli(epochMillis)} ($epochMillis, " +
        s"option '$option') up to its write head $writeHead. Set '${GazetteOptions.StartingOffsetsByTimestampStrategy}' to " +
        "'latest' to start such journals at their write head, or give an earlier time")

  def suspendedAtTime(journal: String, option: String): IllegalStateException =
    new IllegalStateException(
      s"Journal $journal is suspended (no replica serves reads), so option '$option' cannot find its first message at " +
        "or after a time. Resume it (an append does), or leave it out of the option's journals")

  def invalidArgument(name: String, value: String, expected: String): IllegalArgumentException =
    new IllegalArgumentException(s"Argument '$name' has invalid value '$value': expected $expected")

  def badDescriptorSet(file: String, problem: String): IllegalArgumentException =
    new IllegalArgumentException(s"Protobuf descriptor set $file cannot be used: $problem")

  def unknownProtobufMessage(name: String, file: String, known: Seq[String]): IllegalArgumentException =
    new IllegalArgumentException(s"Protobuf descriptor set $file has no message '$name' (or several of that simple " +
      s"name). It holds: ${if (known.isEmpty) "none" else known.sorted.mkString(", ")}")

  def recursiveProtobuf(path: String, field: String): IllegalArgumentException =
    new IllegalArgumentException(s"Protobuf message field $field makes the message recursive ($path), and a " +
      "recursive message has no Spark schema; decode a message that does not contain itself")

  def unwritableJournals(journals: Seq[(String, Long, String)]): IllegalStateException =
    new IllegalStateException(journals.map { case (j, rows, why) => s"Journal $j cannot be written ($rows rows): $why" }
      .mkString("; ") + ". Give the journals a content-type the sink can write, or send no rows there (option 'selector', " +
      "or the 'journal' column)")

  def csvWidth(journal: String, row: Long, partition: Int, fields: Int, expected: Int): IllegalArgumentException =
    new IllegalArgumentException(s"Row $row of partition $partition has $fields CSV fields, but the records of journal " +
      s"$journal have $expected after their UUID column: every record of a CSV journal is as wide as its first")

  def continuousProcessing(): UnsupportedOperationException =
    new UnsupportedOperationException("The Gazette sink does not support continuous processing (Trigger.Continuous): " +
      "it commits whole epochs through the driver. Use a micro-batch trigger, e.g. Trigger.ProcessingTime(\"1 second\")")

  def malformedProtobuf(message: String, journal: String, begin: java.lang.Long, problem: String): IllegalStateException =
    new IllegalStateException(s"Message at offset ${Option(begin).map(_.toString).getOrElse("?")} of journal " +
      s"${Option(journal).getOrElse("?")} is not a valid $message: $problem. Use mode 'PERMISSIVE' to decode it as null.")

  def invalidSecret(name: String, expected: String): IllegalArgumentException =
    new IllegalArgumentException(s"Gazette option '$name' has an invalid value (not shown): expected $expected")

  /** Options as a plan or a log shows them: secrets (authToken) redacted. */
  def describe(options: Map[String, String]): String =
    options.toSeq.sorted.map { case (k, v) =>
      s"$k=${if (GazetteOptions.SecretOptions.contains(k.toLowerCase(java.util.Locale.ROOT))) "*********(redacted)" else v}"
    }.mkString(", ")

  def unknownSessionOption(name: String, known: Iterable[String]): IllegalArgumentException =
    new IllegalArgumentException(s"Unknown Gazette option '$name', set for the whole session as " +
      s"${SessionDefaults.Prefix}$name. Known options: ${known.toSeq.sorted.mkString(", ")}")
}
