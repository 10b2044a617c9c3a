package io.sparkgazette.spark
package options

import java.util.Locale

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._
import scala.util.Try

import io.sparkgazette.client.{ClientConfig, Secret, Tls}
import io.sparkgazette.message.{Framing, JsonPointerScanner}
import io.sparkgazette.spark.errors.GazetteErrors
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** Every option of the connector, in one place: its name, where it applies, its default and what
  * it does ([[GazetteOptions.reference]], from which `docs/options.md` is generated), and the
  * parsing shared by the source (`SourceOptions`) and the sink (`SinkOptions`).
  * A name the reference does not list is refused, so an option cannot exist undocumented.
  */
private[spark] object GazetteOptions {
  val Broker = "broker"
  val Selector = "selector"
  val Journals = "journals"
  val StartingOffsets = "startingOffsets"
  val EndingOffsets = "endingOffsets"
  val StartingTimestamp = "startingTimestamp"
  val EndingTimestamp = "endingTimestamp"
  val StartingOffsetsByTimestamp = "startingOffsetsByTimestamp"
  val EndingOffsetsByTimestamp = "endingOffsetsByTimestamp"
  val StartingOffsetsByTimestampStrategy = "startingOffsetsByTimestampStrategy"
  val ReadCommitted = "readCommitted"
  val MaxBytesPerTrigger = "maxBytesPerTrigger"
  val MinBytesPerTrigger = "minBytesPerTrigger"
  val MaxTriggerDelay = "maxTriggerDelay"
  val FailOnDataLoss = "failOnDataLoss"
  val FailOnMalformed = "failOnMalformed"
  val UuidPointer = "uuidPointer"
  val UuidField = "uuidField"
  val ProducerPruneHorizon = "producerPruneHorizon"
  val IncludeLabels = "includeLabels"
  val SequencerRingSize = "sequencerRingSize"
  val SequencerRingBytes = "sequencerRingBytes"
  val FragmentRoot = "fragmentRoot"
  val DirectFragmentReads = "directFragmentReads"
  val BytesPerPartition = "bytesPerPartition"
  val MinPartitions = "minPartitions"
  val SplitCommitted = "splitCommitted"
  val RealTimePartitions = "realTimePartitions"
  val ColumnNameOfCorruptRecord = "columnNameOfCorruptRecord"
  val ProtobufMessage = "protobufMessage"
  val ProtobufDescriptorFile = "protobufDescriptorFile"

  val Journal = "journal"
  val Mapping = "mapping"
  val DeliveryGuarantee = "deliveryGuarantee"
  val CheckpointLocation = "checkpointLocation"
  val FlushBytes = "flushBytes"
  val BatchId = "batchId"
  val ReaderRingSize = "readerRingSize"
  val StagingLocation = "stagingLocation"

  val RpcTimeout = "rpcTimeout"
  val RetryTimeout = "retryTimeout"
  val TrustedCaFile = "trustedCaFile"
  val CertFile = "certFile"
  val CertKeyFile = "certKeyFile"
  val AuthToken = "authToken"

  /** Options under this prefix are the tests' hooks (faults injected at chosen points of a
    * protocol): accepted, never documented, never listed to users.
    */
  private[spark] val TestPrefix = "test."
  private[spark] val TestSinkFault = "test.sinkFault"

  /** Options Spark itself gives a source or a sink that are not the connector's to check: the
    * query's name (Spark 4.3 passes it to sinks). `path`, from `save(path)`, names the sink's
    * journal; a source has no path, so `load(path)` is refused as an unknown option.
    */
  private[spark] val SparkOptions: Set[String] = Set("queryName").map(_.toLowerCase(Locale.ROOT))

  val DefaultBytesPerPartition: Long = 16L << 20

  /** The last millisecond a v1 UUID's clock (100 ns ticks since 1582, shifted by 4 bits in a long) can hold. */
  val MaxEpochMillis: Long = 45426782430342L

  private val Duration = "a duration: `250ms`, `30s`, `15m`, `24h`, `7d`, or a number of milliseconds"

  /** The options reference: each option of each side once, as `docs/options.md` shows it. */
  private[spark] val reference: Seq[OptionDoc] = {
    import OptionDoc.{Connection, Parsing, Sink, Source}
    Seq(
      OptionDoc(Broker, Source, "required",
        "Broker endpoint(s), `http://host:port` or `https://host:port`; comma-separated for several."),
      OptionDoc(
        Selector,
        Source,
        "one of `selector`, `journals`",
        "A Gazette label selector, e.g. `prefix=events/` or `topic=clicks,region in (eu, us)`. Matching journals " +
          "are discovered again at every trigger; a new one is read from its first byte."
      ),
      OptionDoc(Journals, Source, "one of `selector`, `journals`", "A comma-separated list of journal names."),
      OptionDoc(
        StartingOffsets,
        Source,
        "`latest` (streams), `earliest` (batches)",
        "`earliest`, `latest`, or JSON `{\"journal\": offset}` with -2 for earliest and -1 for latest; journals the " +
          "JSON leaves out start at their earliest offset. Explicit offsets must be message boundaries, at or " +
          "before the write head. A stream uses it only when it starts without a checkpoint."
      ),
      OptionDoc(
        EndingOffsets,
        Source,
        "`latest`",
        "Batch queries only: `latest`, or JSON as for `startingOffsets`. A batch holds the messages that end at or " +
          "before it; an offset past a journal's write head is an error."
      ),
      OptionDoc(
        StartingTimestamp,
        Source,
        "none",
        "Milliseconds since 1970 (UTC): every journal starts at its first message published at or after it " +
          "(its UUID's clock). Takes precedence over `startingOffsetsByTimestamp` and `startingOffsets`."
      ),
      OptionDoc(
        StartingOffsetsByTimestamp,
        Source,
        "none",
        "JSON `{\"journal\": ms}`: the same per journal; journals it leaves out start at their earliest offset. " +
          "Takes precedence over `startingOffsets`."
      ),
      OptionDoc(
        StartingOffsetsByTimestampStrategy,
        Source,
        "`error`",
        "A journal with no message at or after its starting time: `error` fails, naming journal and time; " +
          "`latest` starts it at its write head."
      ),
      OptionDoc(
        EndingTimestamp,
        Source,
        "none",
        "Batch queries only: every journal ends before its first message published at or after this time " +
          "(milliseconds since 1970), or at its write head if there is none."
      ),
      OptionDoc(EndingOffsetsByTimestamp, Source, "none",
        "Batch queries only: JSON `{\"journal\": ms}`, the same per journal; the others end at their write head."),
      OptionDoc(
        ReadCommitted,
        Source,
        "`true`",
        "`true`: exactly once, read committed (a transaction's messages appear when it is acknowledged; rolled-back " +
          "and duplicate messages never). `false`: every message as read, acknowledgements included."
      ),
      OptionDoc(
        MaxBytesPerTrigger,
        Source,
        "none",
        "At most this many bytes per micro-batch, split across journals in proportion to their backlog (every " +
          "journal with a backlog reads at least one message)."
      ),
      OptionDoc(
        MinBytesPerTrigger,
        Source,
        "none",
        "Wait for at least this many new bytes before running a micro-batch, up to `maxTriggerDelay`; at most " +
          "`maxBytesPerTrigger`. `Trigger.AvailableNow` reads everything available regardless."
      ),
      OptionDoc(MaxTriggerDelay, Source, "`15m`",
        s"How long `minBytesPerTrigger` may hold a micro-batch back; $Duration. Only with `minBytesPerTrigger`."),
      OptionDoc(
        FailOnDataLoss,
        Source,
        "`true`",
        "Fail when a journal's bytes were removed before they were read or replayed, a journal vanished or was " +
          "created again, or a write head went backwards. `false`: log, skip and count (metrics `lostBytes`, " +
          "`journalsRestarted`, `bytesSkippedAtPlanning`)."
      ),
      OptionDoc(
        FailOnMalformed,
        Source,
        "`true`",
        "Fail on a malformed message, naming journal and offset. `false`: skip and count " +
          "(metric `malformedMessagesSkipped`)."
      ),
      OptionDoc(UuidPointer, Source, "`/_meta/uuid`",
        "JSON pointer of the UUID in ndjson messages (Gazette's examples use `/UUID`)."),
      OptionDoc(UuidField, Source, "`1`",
        "Protobuf field number holding the UUID's 16 bytes in protobuf-fixed messages (1 to 536870911)."),
      OptionDoc(
        ProducerPruneHorizon,
        Source,
        "`24h`",
        s"Producers silent this long before a journal's newest acknowledgement are forgotten, unless their " +
          s"transaction is open; $Duration."
      ),
      OptionDoc(IncludeLabels, Source, "`false`", "Add the `labels` column: the journal's labels."),
      OptionDoc(
        SequencerRingSize,
        Source,
        "`8192`",
        "How many messages a task holds while their transaction is open (at most 16777216); longer transactions " +
          "are read again from the journal when acknowledged, so a task's memory does not grow with the batch."
      ),
      OptionDoc(SequencerRingBytes, Source, "`67108864`",
        "How many bytes of messages a task holds while their transaction is open. No message may be larger."),
      OptionDoc(FragmentRoot, Source, "none",
        "The brokers' `--broker.file-root`, to read persisted `file://` fragments directly instead of through " +
          "the brokers."),
      OptionDoc(
        DirectFragmentReads,
        Source,
        "`true`",
        "`true`: tasks read persisted fragments straight from the fragment store (S3, GCS, Azure) through the " +
          "signed URLs brokers hand out, as Gazette's own readers do; executors need HTTP(S) reach to the store, " +
          "no credentials. A fragment the store fails is read through a broker instead. `false`: brokers serve " +
          "every byte (also with `fragmentRoot`)."
      ),
      OptionDoc(
        BytesPerPartition,
        Source,
        DefaultBytesPerPartition.toString,
        "How a batch's journal ranges become tasks: a range of at least this many bytes is a task of its own " +
          "(an ndjson range of at least twice as many is split into pieces of about this many bytes, read " +
          "committed too); smaller ranges are packed, several journals to a task, into tasks of about this many bytes."
      ),
      OptionDoc(
        MinPartitions,
        Source,
        "the session's default parallelism",
        "At least this many tasks where there are that many ranges: packing spreads the smaller ranges over " +
          "them, and the largest ndjson ranges are split further (pieces of at least 1 MiB)."
      ),
      OptionDoc(
        RealTimePartitions,
        Source,
        "the session's default parallelism",
        "In real-time mode (`Trigger.RealTime`, Spark 4.1 or newer), how many tasks read the journals: each holds " +
          "a core for the whole batch and keeps a Read open on each of its journals, spread over them by name. The " +
          "cluster needs at least this many free cores. Set on a Spark without real-time mode, the query fails."
      ),
      OptionDoc(
        SplitCommitted,
        Source,
        "`true`",
        "Read committed, split the largest ndjson ranges into pieces of at least `bytesPerPartition` until " +
          "there are `minPartitions` tasks, each sequenced from the producers' states a first pass over the " +
          "pieces before it finds (it reads those bytes twice: it pays where cores are idle while one task " +
          "reads). `false`: one task per journal range."
      ),
      OptionDoc(
        ProtobufMessage,
        Source,
        "none",
        "With `protobufDescriptorFile`: the message `application/x-protobuf-fixed` journals hold, e.g. " +
          "`demo.Event`. The rows are the message's fields, decoded in the scan (a `.schema` may name fewer of " +
          "them); see typed rows in the user guide."
      ),
      OptionDoc(
        ProtobufDescriptorFile,
        Source,
        "none",
        "The descriptor set that defines `protobufMessage` (`protoc --include_imports --descriptor_set_out`), " +
          "read on the driver through Hadoop's file systems."
      ),
      OptionDoc(
        ColumnNameOfCorruptRecord,
        Parsing,
        "`spark.sql.columnNameOfCorruptRecord` (`_corrupt_record`)",
        "The string field of the schema that holds a malformed message's text. A schema with this field keeps " +
          "malformed messages as rows (Spark's PERMISSIVE): the fields the parser could read, the rest null."
      )
    ) ++ Seq(
      "timestampFormat" -> "How timestamps are written (Spark's datetime pattern), e.g. `yyyy-MM-dd HH:mm:ss`.",
      "timestampNTZFormat" -> "How timestamps without time zone are written.",
      "dateFormat" -> "How dates are written, e.g. `dd/MM/yyyy`.",
      "timeZone" -> "The time zone of timestamps without one (default: `spark.sql.session.timeZone`).",
      "locale" -> "The locale of month and day names in dates and timestamps, e.g. `en-US`.",
      "enableDateTimeParsingFallback" ->
        "Whether dates and timestamps that do not match their format are parsed as Spark 1.x and 2.0 did.",
      "allowComments" -> "ndjson: allow Java and C++ comments.",
      "allowUnquotedFieldNames" -> "ndjson: allow unquoted field names.",
      "allowSingleQuotes" -> "ndjson: allow single quotes around names and strings.",
      "allowNumericLeadingZeros" -> "ndjson: allow leading zeros in numbers.",
      "allowNonNumericNumbers" -> "ndjson: allow `NaN`, `Infinity` and `-Infinity`.",
      "allowBackslashEscapingAnyCharacter" -> "ndjson: allow a backslash before any character.",
      "allowUnquotedControlChars" -> "ndjson: allow unescaped control characters in strings.",
      "nullValue" -> "CSV: the text of a null value.",
      "emptyValue" -> "CSV: the value of an empty quoted string.",
      "nanValue" -> "CSV: the text of a not-a-number value.",
      "positiveInf" -> "CSV: the text of positive infinity.",
      "negativeInf" -> "CSV: the text of negative infinity.",
      "ignoreLeadingWhiteSpace" -> "CSV: trim white space before values.",
      "ignoreTrailingWhiteSpace" -> "CSV: trim white space after values."
    ).map { case (name, doc) => OptionDoc(name, OptionDoc.Parsing, "Spark's", doc) } ++ Seq(
      OptionDoc(Broker, Sink, "required", "Broker endpoint(s), as for the source."),
      OptionDoc(Journal, Sink, "one of `journal`, `selector`",
        "The one journal to write (also `save(journal)`)."),
      OptionDoc(
        Selector,
        Sink,
        "one of `journal`, `selector`",
        "A label selector; its journals are listed again for every batch, and rows are mapped onto them by " +
          "their `key` column (see `mapping`), or go to the journal their `journal` column names."
      ),
      OptionDoc(
        Mapping,
        Sink,
        "`rendezvous` with a `key` column, else `random`",
        "`modulo`, `rendezvous` or `random`: Gazette's own mappings over the selected journals sorted by name " +
          "(32-bit FNV-1a of the key), so Go publishers and this sink place a key alike. Exactly once in real-time " +
          "mode, rows without a `key` are placed by `rendezvous` of their `origin`, and `random` is refused."
      ),
      OptionDoc(
        DeliveryGuarantee,
        Sink,
        "`exactly-once`",
        "`exactly-once` (transactions and ACK intents; in real-time mode, committed OUTSIDE_TXN messages whose " +
          "UUIDs follow from the rows' `origin`) or `at-least-once` (committed OUTSIDE_TXN messages, no intents)."
      ),
      OptionDoc(
        CheckpointLocation,
        Sink,
        "required for exactly-once streams",
        "The query's checkpoint; ACK intents are recorded under `<checkpointLocation>/gazette-sink/`. Spark " +
          "passes `writeStream.option(\"checkpointLocation\", ...)` to the sink, but not the session-wide " +
          "`spark.sql.streaming.checkpointLocation`. A batch write takes it with `batchId`."
      ),
      OptionDoc(UuidPointer, Sink, "`/_meta/uuid`", "Where the UUID goes in ndjson messages."),
      OptionDoc(UuidField, Sink, "`1`", "The protobuf field number the UUID goes in, in protobuf-fixed messages."),
      OptionDoc(
        FlushBytes,
        Sink,
        "`1048576`",
        "Bytes a task holds in memory per journal (at most 64 MiB). Exactly once, beyond them it spools to local " +
          "disk (`java.io.tmpdir`) until its one append at commit; at least once, it appends them."
      ),
      OptionDoc(
        BatchId,
        Sink,
        "none",
        "Batch writes only, with `checkpointLocation`: names the job, so that running it again with the same id " +
          "writes nothing twice (and completes a run that failed after recording its intents); a different id, " +
          "or none, is a new write. 1 to 128 letters, digits, `.`, `_`, `-`, not starting with `.`."
      ),
      OptionDoc(
        ReaderRingSize,
        Sink,
        "`8192`",
        "The ring (in messages) of the read-committed readers the output must stay cheap for. A task whose rows " +
          "for a journal outgrow `readerRingSize` / (2 × the write's partitions) messages, or 64 MiB / " +
          "(2 × partitions) bytes, stages them and appends them after the ACKs; `0` never stages."
      ),
      OptionDoc(
        StagingLocation,
        Sink,
        "derived: see [sink.md](sink.md#where-staged-runs-live)",
        "Batch writes without `batchId`: the directory (any Hadoop file system URI) where large runs are staged, " +
          "one every host of the cluster sees (HDFS, an object store, a shared mount); each write stages under a " +
          "directory of its own there and deletes it when it ends. Writes that record intents (streams, " +
          "`batchId`) stage under `checkpointLocation` and ignore it."
      ),
      OptionDoc(RpcTimeout, Connection, "`30s`",
        s"Deadline of each RPC attempt (List, Apply, a metadata read, each Append attempt); above zero. $Duration."),
      OptionDoc(
        RetryTimeout,
        Connection,
        "`2m`",
        "Retry budget: how long an RPC keeps retrying transient failures (unavailable brokers, route changes) " +
          s"before the query fails; `0` retries nothing. $Duration."
      ),
      OptionDoc(
        TrustedCaFile,
        Connection,
        "the JVM's trust store",
        "PEM file of the CA that signed the brokers' certificates (Gazette's `--broker.trusted-ca-file`). TLS " +
          "options need `https://` broker endpoints."
      ),
      OptionDoc(CertFile, Connection, "none",
        "A client certificate (PEM), for brokers that require one (mutual TLS); with `certKeyFile`."),
      OptionDoc(CertKeyFile, Connection, "none", "The client certificate's PKCS#8 PEM key; with `certFile`."),
      OptionDoc(
        AuthToken,
        Connection,
        "none",
        "A bearer token sent with every RPC: a JWT signed with one of the brokers' `--broker.auth-keys`. It never " +
          "appears in plans, errors or the connector's logs."
      )
    )
  }

  private def names(side: OptionDoc.Side): Seq[String] =
    reference.filter(d => d.side == side || d.side == OptionDoc.Connection && side != OptionDoc.Connection)
      .map(_.name).distinct

  private[spark] val parsingNames: Seq[String] = reference.filter(_.side == OptionDoc.Parsing).map(_.name)
  private[spark] val sourceNames: Seq[String] = names(OptionDoc.Source) ++ parsingNames
  private[spark] val sinkNames: Seq[String] = names(OptionDoc.Sink)
  private[spark] val connectionNames: Seq[String] = reference.filter(_.side == OptionDoc.Connection).map(_.name)

  /** The source's option names, for the Python package's test that its keywords match (Spark's
    * parsing options pass through the helpers' `parse_options` as Spark names them).
    */
  def sourceOptionNames(): java.util.List[String] = sourceNames.filterNot(parsingNames.contains).asJava

  /** Spark's parsing options the source takes with a schema. */
  def parsingOptionNames(): java.util.List[String] = parsingNames.asJava

  /** The parsing options among `options`, for Spark's JSON and CSV parsers. */
  private[spark] def parsing(options: CaseInsensitiveStringMap): Map[String, String] = {
    val wanted = parsingNames.map(_.toLowerCase(Locale.ROOT)).toSet
    options.asCaseSensitiveMap().asScala.toMap.filter { case (k, _) => wanted(k.toLowerCase(Locale.ROOT)) }
  }

  /** The sink's option names. */
  def sinkOptionNames(): java.util.List[String] = sinkNames.asJava

  /** The connection options, which the source, the sink and the admin helpers all take. */
  def connectionOptionNames(): java.util.List[String] = connectionNames.asJava

  /** A client's config from `broker` and the connection options alone (the admin helpers'). */
  def connectionConfig(options: Map[String, String]): ClientConfig = {
    val o = new Reader(options, Broker +: connectionNames)
    connection(o).config(broker(o))
  }

  private[spark] def broker(o: Reader): String = {
    val b = o.get(Broker).getOrElse(throw GazetteErrors.missingOption(Broker,
        "the broker address, e.g. http://127.0.0.1:8080"))
    Try(ClientConfig(b)).failed.foreach(e => throw GazetteErrors.invalidOption(Broker, b, e.getMessage))
    b
  }

  private[spark] def connection(o: Reader): BrokerConnection = BrokerConnection(
    rpcTimeout = o.get(RpcTimeout).map { v =>
      val d = duration(RpcTimeout, v)
      if (d.toMillis <= 0) throw GazetteErrors.invalidOption(RpcTimeout, v, "a duration above zero, such as 30s")
      d
    },
    retryTimeout = o.get(RetryTimeout).map(duration(RetryTimeout, _)),
    tls = tls(o),
    authToken = o.get(AuthToken).map { t =>
      if (t.trim.isEmpty || t.exists(_.isWhitespace))
        throw GazetteErrors.invalidSecret(AuthToken, "a JWT without spaces")
      new Secret(t)
    }
  )

  private def tls(o: Reader): Tls = {
    if (o.get(CertFile).isDefined != o.get(CertKeyFile).isDefined)
      throw GazetteErrors.missingOption(if (o.get(CertFile).isDefined) CertKeyFile else CertFile,
        s"$CertFile and $CertKeyFile go together (a client certificate and its PKCS#8 PEM key)")
    val tls = Tls(o.get(TrustedCaFile), o.get(CertFile), o.get(CertKeyFile))
    val plain =
      o.get(Broker).toSeq.flatMap(_.split(',')).map(_.trim).filter(b => b.nonEmpty && !b.startsWith("https://"))
    if (tls != Tls() && plain.nonEmpty)
      throw GazetteErrors.invalidOption(
        Broker, o.get(Broker).get, s"https:// endpoints: TLS options are set, and ${plain.mkString(", ")} is not TLS")
    tls
  }

  private[spark] def uuidPointer(o: Reader): String = {
    val p = o.get(UuidPointer).getOrElse(Framing.DefaultUuidPointer)
    Try(new JsonPointerScanner(p)).failed.foreach(_ =>
      throw GazetteErrors.invalidOption(UuidPointer, p, "a JSON pointer such as /_meta/uuid"))
    if (p.isEmpty) throw GazetteErrors.invalidOption(UuidPointer, p, "a JSON pointer such as /_meta/uuid")
    p
  }

  private[spark] def uuidField(o: Reader): Int =
    o.get(UuidField).map { v =>
      Try(v.toInt).toOption.filter(n => n >= 1 && n <= (1 << 29) - 1)
        .getOrElse(throw GazetteErrors.invalidOption(UuidField, v, "a protobuf field number from 1 to 536870911"))
    }.getOrElse(Framing.DefaultUuidField)

  private[spark] def positiveLong(option: String, value: String): Long =
    Try(value.trim.toLong).toOption.filter(_ > 0).getOrElse(throw GazetteErrors.invalidOption(option, value,
        "a positive whole number"))

  private[spark] def nonNegativeInt(option: String, value: String): Int =
    Try(value.trim.toInt).toOption.filter(_ >= 0).getOrElse(throw GazetteErrors.invalidOption(option, value,
        "a whole number >= 0"))

  /** `250ms`, `30s`, `15m`, `24h`, `7d`, or a number of milliseconds. */
  private[spark] def duration(option: String, value: String): FiniteDuration = {
    val m = """(?i)\s*(\d+)\s*(ms|s|m|min|h|d)?\s*""".r
    value match {
      case m(n, unit) =>
        val amount = n.toLong
        Option(unit).map(_.toLowerCase(Locale.ROOT)).getOrElse("ms") match {
          case "ms" => amount.millis
          case "s" => amount.seconds
          case "m" | "min" => amount.minutes
          case "h" => amount.hours
          case _ => amount.days
        }
      case _ => throw GazetteErrors.invalidOption(option, value, "a duration such as 250ms, 30s, 15m, 24h or 7d")
    }
  }

  /** Option values by case-insensitive name, refusing names outside `known`. Spark's own options
    * are not the connector's to check, and the tests' hooks pass as they are.
    */
  private[spark] final class Reader(options: Map[String, String], known: Seq[String]) {
    private val byLower = known.map(k => k.toLowerCase(Locale.ROOT) -> k).toMap
    private val values: Map[String, String] = options.flatMap { case (k, v) =>
      val lower = k.toLowerCase(Locale.ROOT)
      byLower.get(lower) match {
        case Some(name) => Some(name -> v)
        case None if lower.startsWith(TestPrefix) => Some(k -> v)
        case None if SparkOptions.contains(lower) => None
        // A session-wide default for the other side (a sink's option while reading) is not this query's.
        case None if allNames.exists(_.equalsIgnoreCase(k)) && SessionDefaults().get(lower).contains(v) => None
        case None if SessionDefaults().contains(lower) =>
          throw GazetteErrors.unknownSessionOption(k, SessionDefaults.Prefix + k, known)
        case None => throw GazetteErrors.unknownOption(k, known)
      }
    }

    def get(name: String): Option[String] =
      if (name.startsWith(TestPrefix)) values.collectFirst { case (k, v) if k.equalsIgnoreCase(name) => v }
      else values.get(name)

    def boolean(name: String, default: Boolean): Boolean = values.get(name).map { v =>
      v.trim.toLowerCase(Locale.ROOT) match {
        case "true" => true
        case "false" => false
        case _ => throw GazetteErrors.invalidOption(name, v, "true or false")
      }
    }.getOrElse(default)
  }

  private[spark] lazy val allNames: Seq[String] = (sourceNames ++ sinkNames).distinct

  /** `docs/options.md`: the reference as a page, generated from [[reference]] (`make options-doc`). */
  private[spark] def markdown: String = {
    def table(side: OptionDoc.Side): String =
      ("| option | default | meaning |" +: "| --- | --- | --- |" +: reference.filter(_.side == side).map { d =>
        s"| `${d.name}` | ${d.default} | ${d.doc} |"
      }).mkString("\n")
    // Interpolated after the margin is stripped: the tables' rows begin with the margin character.
    val intro =
      """# Options
        |
        |<!-- Generated from GazetteOptions.reference by `make options-doc`; a test fails when this page and the code differ. -->
        |
        |Options are set with `.option(name, value)` on `spark.readStream`/`spark.read` (the source) and on
        |`df.writeStream`/`df.write` (the sink), or for every query of a session as
        |`spark.datasource.gazette.<option>` (`spark.conf.set`, `--conf`); an option a query sets itself wins.
        |Names are case-insensitive. The Python helpers take the same options as snake_case keywords
        |(`startingOffsets` is `starting_offsets`), keyword-only, and any option by this page's name through
        |`**options` (`read_stream(spark, broker, journals="a", maxBytesPerTrigger=1 << 20)`); they convert Python
        |values (booleans, datetimes, dicts, lists) to these strings.
        |
        |The connector checks every option where the DataFrame is loaded (`load()`, and a writer's
        |`save()`/`start()`), and an error names the option (condition `GAZETTE_INVALID_OPTION`,
        |`GAZETTE_UNKNOWN_OPTION`, `GAZETTE_MISSING_OPTION` or `GAZETTE_CONFLICTING_OPTIONS`). What
        |only a stream must not do or must have (`endingOffsets` and the other ending options, `batchId`, an
        |exactly-once sink's `checkpointLocation`) is checked when the stream starts running: `start()`
        |returns, and the query stops at once with that error.
        |
        |Of Spark's own options, `path` (`save(journal)`) names the sink's journal, and the query's name
        |(`queryName`) passes through.""".stripMargin
    val typedIntro =
      """Given a schema (`.schema(...)`, Python's `schema=`), the source parses each message into the schema's
        |fields, with Spark's own parsers and these of their options (Python: `parse_options={...}` with these
        |names); the connector's columns move into the struct `_gazette`. See the user guide (docs/source.md).""".stripMargin
    val tls = """Files named by the TLS options are read where the clients run, the driver and every executor: on a
      |cluster, put them at the same path on every node (or distribute them with `--files`).""".stripMargin
    Seq(
      intro,
      "## Source",
      table(OptionDoc.Source),
      "## Sink",
      table(OptionDoc.Sink),
      "## Typed rows (source, with a schema)",
      typedIntro,
      table(OptionDoc.Parsing),
      "## Connection (source, sink and the admin helpers)",
      table(OptionDoc.Connection),
      tls
    ).mkString("", "\n\n", "\n")
  }
}

/** One option as the reference documents it. */
private[spark] final case class OptionDoc(name: String, side: OptionDoc.Side, default: String, doc: String)

private[spark] object OptionDoc {
  sealed trait Side
  case object Source extends Side
  case object Sink extends Side

  /** How the clients reach the brokers: the source, the sink and the admin helpers take these. */
  case object Connection extends Side

  /** Spark's parsing options, which the source takes with a schema. */
  case object Parsing extends Side
}
