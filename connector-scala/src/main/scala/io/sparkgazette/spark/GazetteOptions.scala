package io.sparkgazette.spark

import java.util.Locale

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._
import scala.util.Try

import io.sparkgazette.client.ClientConfig
import io.sparkgazette.message.{Framing, JsonPointerScanner}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** Where a read starts or ends in each journal. */
sealed trait OffsetSpec

object OffsetSpec {
  case object Earliest extends OffsetSpec
  case object Latest extends OffsetSpec

  /** Explicit byte offsets; [[EarliestOffset]] and [[LatestOffset]] stand for either end. */
  final case class Specific(offsets: Map[String, Long]) extends OffsetSpec

  /** In every journal, the first message published at or after `epochMillis` (see [[OffsetsForTimes]]). */
  final case class AtTime(epochMillis: Long) extends OffsetSpec

  /** The same, with a time per journal; journals left out start at their earliest offset, or end at their latest. */
  final case class AtTimes(epochMillis: Map[String, Long]) extends OffsetSpec

  val EarliestOffset: Long = -2L
  val LatestOffset: Long = -1L
}

/** Which journals a query reads. */
sealed trait JournalTarget {
  def describe: String
}

/** What a start by time does in a journal with no message at or after the time
  * (option `startingOffsetsByTimestampStrategy`, Kafka's name).
  */
sealed trait NoMessageAtTime
object NoMessageAtTime {
  /** Fail, naming the journal and the time. */
  case object Error extends NoMessageAtTime
  /** Start at the journal's write head. */
  case object Latest extends NoMessageAtTime
}

object JournalTarget {

  /** Journals matching a label selector, discovered again at every trigger. */
  final case class BySelector(selector: String) extends JournalTarget {
    override def describe: String = s"selector '$selector'"
  }

  /** A fixed list of journals. */
  final case class ByName(journals: Seq[String]) extends JournalTarget {
    override def describe: String = s"journals ${journals.mkString(", ")}"
  }
}

/** The source's options, parsed and validated once. The README's option table documents each. */
final case class SourceOptions(
    broker: String,
    target: JournalTarget,
    startingOffsets: OffsetSpec,
    endingOffsets: OffsetSpec,
    readCommitted: Boolean,
    maxBytesPerTrigger: Option[Long],
    minBytesPerTrigger: Option[Long],
    maxTriggerDelay: FiniteDuration,
    failOnDataLoss: Boolean,
    failOnMalformed: Boolean,
    uuidPointer: String,
    uuidField: Int,
    producerPruneHorizon: FiniteDuration,
    includeLabels: Boolean,
    sequencerRingSize: Int,
    sequencerRingBytes: Long,
    fragmentRoot: Option[String],
    connection: BrokerConnection = BrokerConnection(),
    noMessageAtStart: NoMessageAtTime = NoMessageAtTime.Error,
    bytesPerPartition: Long = GazetteOptions.DefaultBytesPerPartition,
    minPartitions: Option[Int] = None
) {
  def clientConfig: ClientConfig = connection.config(broker).copy(fragmentRoot = fragmentRoot)
}

/** Which journals a write goes to. */
sealed trait WriteTarget
object WriteTarget {
  final case class OneJournal(journal: String) extends WriteTarget
  final case class BySelector(selector: String) extends WriteTarget
}

/** The sink's options, parsed and validated once. */
final case class SinkOptions(
    broker: String,
    target: WriteTarget,
    mapping: Option[String],
    exactlyOnce: Boolean,
    uuidPointer: String,
    uuidField: Int,
    checkpointLocation: Option[String],
    flushBytes: Int,
    testFault: Option[SinkFault],
    batchId: Option[String] = None,
    connection: BrokerConnection = BrokerConnection(),
    readerRingSize: Int = 8192
) {
  def clientConfig: ClientConfig = connection.config(broker)
}

/** A failure the tests inject at a chosen point of the sink's protocol (option `testFault`,
  * `point:epoch`): `task-after-half` fails the first attempt of partition 0's task once it has
  * appended its first five rows (`task-after-half:1/4`: in epochs 1, 5, 9, ...); `driver-before-persist`,
  * `driver-after-persist` and `driver-after-some-acks` fail the driver's commit there.
  */
final case class SinkFault(point: String, epoch: Long, every: Long = 0L) {
  def strikes(point: String, epoch: Long): Boolean =
    this.point == point && (if (every == 0) this.epoch == epoch else epoch >= this.epoch && (epoch - this.epoch) % every == 0)
}

object GazetteOptions {
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
  val BytesPerPartition = "bytesPerPartition"
  val MinPartitions = "minPartitions"

  val DefaultBytesPerPartition: Long = 16L << 20

  val Journal = "journal"
  val Mapping = "mapping"
  val DeliveryGuarantee = "deliveryGuarantee"
  val CheckpointLocation = "checkpointLocation"
  val FlushBytes = "flushBytes"
  val TestFault = "testFault"
  val BatchId = "batchId"
  val ReaderRingSize = "readerRingSize"

  val RpcTimeout = "rpcTimeout"
  val RetryTimeout = "retryTimeout"
  val TrustedCaFile = "trustedCaFile"
  val CertFile = "certFile"
  val CertKeyFile = "certKeyFile"
  val AuthToken = "authToken"

  private val sinkOptions = Seq(Broker, Journal, Selector, Mapping, DeliveryGuarantee, UuidPointer, UuidField,
    CheckpointLocation, FlushBytes, TestFault, BatchId, ReaderRingSize) ++ connectionOptions

  /** Parses the sink's options; streaming writes need `checkpointLocation`. */
  def sink(options: Map[String, String], streaming: Boolean): SinkOptions = {
    // Spark adds `path` for save(path); a journal name there is the same as option `journal`.
    val o = new Reader(options.filterNot(_._1.equalsIgnoreCase("path")), sinkOptions)
    val target = (o.get(Journal).orElse(options.collectFirst { case (k, v) if k.equalsIgnoreCase("path") => v }), o.get(Selector)) match {
      case (Some(_), Some(_)) => throw conflicting(Journal, Selector)
      case (Some(j), None) =>
        if (j.trim.isEmpty || j.contains(',')) throw GazetteErrors.invalidOption(Journal, j, "one journal name (use 'selector' for several)")
        WriteTarget.OneJournal(j.trim)
      case (None, Some(s)) =>
        Try(io.sparkgazette.client.Selector.parse(s)).failed.foreach(e => throw GazetteErrors.invalidOption(Selector, s, e.getMessage))
        WriteTarget.BySelector(s)
      case (None, None) => throw GazetteErrors.missingOption(s"$Journal' or '$Selector", "which journals to write")
    }
    val mapping = o.get(Mapping).map { m =>
      val name = m.trim.toLowerCase(Locale.ROOT)
      if (!Set("modulo", "rendezvous", "random").contains(name))
        throw GazetteErrors.invalidOption(Mapping, m, "modulo, rendezvous or random")
      name
    }
    val exactlyOnce = o.get(DeliveryGuarantee).map(_.trim.toLowerCase(Locale.ROOT)) match {
      case None | Some("exactly-once") => true
      case Some("at-least-once")       => false
      case Some(other)                 => throw GazetteErrors.invalidOption(DeliveryGuarantee, other, "exactly-once or at-least-once")
    }
    val checkpoint = o.get(CheckpointLocation)
    if (streaming && exactlyOnce && checkpoint.isEmpty)
      throw GazetteErrors.missingOption(CheckpointLocation,
        "an exactly-once streaming write keeps its ACK intents there. Set it with " +
          "writeStream.option(\"checkpointLocation\", ...): Spark does not show the session-wide default " +
          "(spark.sql.streaming.checkpointLocation) to sinks. Or set deliveryGuarantee=at-least-once")
    val fault = o.get(TestFault).map { f =>
      f.split(':') match {
        case Array(point, epoch) if Set("task-after-half", "driver-before-persist", "driver-after-persist",
            "driver-after-some-acks", "driver-after-publish").contains(point) && epoch.toLongOption.isDefined => SinkFault(point, epoch.toLong)
        case Array("task-after-half", every) if every.matches("[0-9]+/[1-9][0-9]*") =>
          val Array(first, period) = every.split('/').map(_.toLong)
          SinkFault("task-after-half", first, period)
        case _ => throw GazetteErrors.invalidOption(TestFault, f, "point:epoch, e.g. driver-after-persist:1")
      }
    }
    val batchId = o.get(BatchId).map { id =>
      if (streaming) throw GazetteErrors.invalidOption(BatchId, id, "no value: batchId applies to batch writes only (a stream keys its epochs itself)")
      if (!id.matches("[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}"))
        throw GazetteErrors.invalidOption(BatchId, id, "1 to 128 letters, digits, '.', '_' or '-', not starting with '.'")
      if (!exactlyOnce) throw GazetteErrors.conflictingOptions(BatchId, s"$DeliveryGuarantee=at-least-once")
      if (checkpoint.isEmpty) throw GazetteErrors.missingOption(CheckpointLocation, "a batch write with batchId records its ACK intents there")
      id
    }
    SinkOptions(broker(o), target, mapping, exactlyOnce, uuidPointer(o), uuidField(o), checkpoint,
      o.get(FlushBytes).map(positiveLong(FlushBytes, _)).map(n => math.min(n, 64L << 20).toInt).getOrElse(1 << 20), fault,
      batchId, connection(o), o.get(ReaderRingSize).map(nonNegativeInt(ReaderRingSize, _)).getOrElse(8192))
  }

  private def conflicting(a: String, b: String) = GazetteErrors.conflictingOptions(a, b)

  private val sourceOptions = Seq(Broker, Selector, Journals, StartingOffsets, EndingOffsets, StartingTimestamp,
    EndingTimestamp, StartingOffsetsByTimestamp, EndingOffsetsByTimestamp, StartingOffsetsByTimestampStrategy, ReadCommitted,
    MaxBytesPerTrigger, MinBytesPerTrigger, MaxTriggerDelay, FailOnDataLoss, FailOnMalformed, UuidPointer, UuidField,
    ProducerPruneHorizon, IncludeLabels, SequencerRingSize, SequencerRingBytes, FragmentRoot, BytesPerPartition,
    MinPartitions) ++ connectionOptions

  /** Parses the source's options; `streaming` picks the default starting offsets. */
  def source(options: CaseInsensitiveStringMap, streaming: Boolean): SourceOptions = {
    val o = new Reader(options.asCaseSensitiveMap().asScala.toMap, sourceOptions)
    val target = (o.get(Selector), o.get(Journals)) match {
      case (Some(_), Some(_)) => throw GazetteErrors.conflictingOptions(Selector, Journals)
      case (Some(s), None) =>
        Try(io.sparkgazette.client.Selector.parse(s)).failed.foreach(e => throw GazetteErrors.invalidOption(Selector, s, e.getMessage))
        JournalTarget.BySelector(s)
      case (None, Some(j)) =>
        val names = j.split(',').map(_.trim).filter(_.nonEmpty).toSeq
        if (names.isEmpty) throw GazetteErrors.invalidOption(Journals, j, "a comma-separated list of journal names")
        JournalTarget.ByName(names.distinct)
      case (None, None) => throw GazetteErrors.missingOption(s"$Selector' or '$Journals", "which journals to read")
    }
    // By time, as Kafka: a timestamp for all journals wins over one per journal, which wins over offsets.
    // Every option given is checked, also one that another takes precedence over.
    for (name <- Seq(EndingOffsets, EndingTimestamp, EndingOffsetsByTimestamp); v <- o.get(name) if streaming)
      throw GazetteErrors.invalidOption(name, v, s"no value: $name applies to batch queries only")
    val endingByOffsets = o.get(EndingOffsets).map(offsets(EndingOffsets, _))
    if (endingByOffsets.contains(OffsetSpec.Earliest))
      throw GazetteErrors.invalidOption(EndingOffsets, "earliest", "'latest' or a JSON object of offsets")
    val ending = Seq(o.get(EndingTimestamp).map(v => OffsetSpec.AtTime(epochMillis(EndingTimestamp, v))),
      o.get(EndingOffsetsByTimestamp).map(v => OffsetSpec.AtTimes(timestamps(EndingOffsetsByTimestamp, v))),
      endingByOffsets).flatten.headOption
    val starting = Seq(o.get(StartingTimestamp).map(v => OffsetSpec.AtTime(epochMillis(StartingTimestamp, v))),
      o.get(StartingOffsetsByTimestamp).map(v => OffsetSpec.AtTimes(timestamps(StartingOffsetsByTimestamp, v))),
      o.get(StartingOffsets).map(offsets(StartingOffsets, _))).flatten.headOption
    for (s <- starting; e <- ending) startAfterEnd(s, e).foreach { case (j, from, to) =>
      throw GazetteErrors.invalidOption(if (o.get(EndingTimestamp).isDefined) EndingTimestamp else EndingOffsetsByTimestamp,
        to.toString, s"a time at or after the starting time ($from)${j.map(" for journal " + _).getOrElse("")}")
    }
    val noMessageAtStart = o.get(StartingOffsetsByTimestampStrategy).map(v => v.trim.toLowerCase(Locale.ROOT) match {
      case "error"  => NoMessageAtTime.Error
      case "latest" => NoMessageAtTime.Latest
      case _        => throw GazetteErrors.invalidOption(StartingOffsetsByTimestampStrategy, v, "error or latest")
    }).getOrElse(NoMessageAtTime.Error)
    val maxBytes = o.get(MaxBytesPerTrigger).map(positiveLong(MaxBytesPerTrigger, _))
    val minBytes = o.get(MinBytesPerTrigger).map(positiveLong(MinBytesPerTrigger, _))
    for (max <- maxBytes; min <- minBytes if min > max)
      throw GazetteErrors.invalidOption(MinBytesPerTrigger, min.toString, s"at most $MaxBytesPerTrigger ($max)")
    if (o.get(MaxTriggerDelay).isDefined && minBytes.isEmpty)
      throw GazetteErrors.invalidOption(MaxTriggerDelay, o.get(MaxTriggerDelay).get, s"to be given together with $MinBytesPerTrigger")
    SourceOptions(
      broker = broker(o),
      target = target,
      startingOffsets = starting.getOrElse(if (streaming) OffsetSpec.Latest else OffsetSpec.Earliest),
      endingOffsets = ending.getOrElse(OffsetSpec.Latest),
      readCommitted = o.boolean(ReadCommitted, default = true),
      maxBytesPerTrigger = maxBytes,
      minBytesPerTrigger = minBytes,
      maxTriggerDelay = o.get(MaxTriggerDelay).map(duration(MaxTriggerDelay, _)).getOrElse(15.minutes),
      failOnDataLoss = o.boolean(FailOnDataLoss, default = true),
      failOnMalformed = o.boolean(FailOnMalformed, default = true),
      uuidPointer = uuidPointer(o),
      uuidField = uuidField(o),
      producerPruneHorizon = o.get(ProducerPruneHorizon).map(duration(ProducerPruneHorizon, _)).getOrElse(24.hours),
      includeLabels = o.boolean(IncludeLabels, default = false),
      sequencerRingSize = o.get(SequencerRingSize).map(positiveLong(SequencerRingSize, _))
        .map(n => if (n > (1 << 24)) throw GazetteErrors.invalidOption(SequencerRingSize, n.toString, "at most 16777216") else n.toInt)
        .getOrElse(8192),
      sequencerRingBytes = o.get(SequencerRingBytes).map(positiveLong(SequencerRingBytes, _)).getOrElse(64L << 20),
      fragmentRoot = o.get(FragmentRoot),
      connection = connection(o),
      noMessageAtStart = noMessageAtStart,
      bytesPerPartition = o.get(BytesPerPartition).map(positiveLong(BytesPerPartition, _)).getOrElse(DefaultBytesPerPartition),
      minPartitions = o.get(MinPartitions).map { v =>
        v.trim.toIntOption.filter(_ > 0).getOrElse(throw GazetteErrors.invalidOption(MinPartitions, v, "a whole number from 1 to 2147483647"))
      }
    )
  }

  /** A time in milliseconds since the Unix epoch, as Kafka's `startingTimestamp` takes it. */
  private def epochMillis(option: String, value: String): Long =
    value.trim.toLongOption.filter(t => t >= 0 && t <= MaxEpochMillis)
      .getOrElse(throw GazetteErrors.invalidOption(option, value,
        s"milliseconds since 1970-01-01T00:00:00Z, such as 1767225600000, at most $MaxEpochMillis (the last a message UUID's clock can hold)"))

  /** The last millisecond a v1 UUID's clock (100 ns ticks since 1582, shifted by 4 bits in a long) can hold. */
  val MaxEpochMillis: Long = 45426782430342L

  /** A JSON object of times in milliseconds since the Unix epoch, by journal. */
  private def timestamps(option: String, value: String): Map[String, Long] = {
    val parsed = Try(JournalOffsets.parseJson(value)).getOrElse(
      throw GazetteErrors.invalidOption(option, value, """JSON such as {"a/journal": 1767225600000} (milliseconds since 1970)"""))
    parsed.find(t => t._2 < 0 || t._2 > MaxEpochMillis).foreach { case (j, t) =>
      throw GazetteErrors.invalidOption(option, value, s"times from 0 to $MaxEpochMillis (milliseconds since 1970); journal $j has $t")
    }
    parsed
  }

  // A start by time after the end by time, in all journals (None) or in one.
  private def startAfterEnd(start: OffsetSpec, end: OffsetSpec): Option[(Option[String], Long, Long)] = (start, end) match {
    case (OffsetSpec.AtTime(s), OffsetSpec.AtTime(e)) if s > e => Some((None, s, e))
    case (OffsetSpec.AtTime(s), OffsetSpec.AtTimes(es)) => es.collectFirst { case (j, e) if s > e => (Some(j), s, e) }
    case (OffsetSpec.AtTimes(ss), OffsetSpec.AtTime(e)) => ss.collectFirst { case (j, s) if s > e => (Some(j), s, e) }
    case (OffsetSpec.AtTimes(ss), OffsetSpec.AtTimes(es)) =>
      ss.toSeq.sortBy(_._1).collectFirst { case (j, s) if es.get(j).exists(s > _) => (Some(j), s, es(j)) }
    case _ => None
  }

  private[spark] def broker(o: Reader): String = {
    val b = o.get(Broker).getOrElse(throw GazetteErrors.missingOption(Broker, "the broker address, e.g. http://127.0.0.1:8080"))
    Try(ClientConfig(b)).failed.foreach(e => throw GazetteErrors.invalidOption(Broker, b, e.getMessage))
    b
  }

  private def connectionOptions = Seq(RpcTimeout, RetryTimeout, TrustedCaFile, CertFile, CertKeyFile, AuthToken)

  /** Options whose values are never shown: in errors, plans and logs they read as redacted. */
  val SecretOptions: Set[String] = Set(AuthToken.toLowerCase(Locale.ROOT))

  /** A client's config from `broker` and the connection options alone (the admin helpers'). */
  def connectionConfig(options: Map[String, String]): ClientConfig = {
    val o = new Reader(options, Broker +: connectionOptions)
    connection(o).config(broker(o))
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
      if (t.trim.isEmpty || t.exists(_.isWhitespace)) throw GazetteErrors.invalidSecret(AuthToken, "a JWT without spaces")
      new io.sparkgazette.client.Secret(t)
    })

  private def tls(o: Reader): io.sparkgazette.client.Tls = {
    if (o.get(CertFile).isDefined != o.get(CertKeyFile).isDefined)
      throw GazetteErrors.missingOption(if (o.get(CertFile).isDefined) CertKeyFile else CertFile,
        s"$CertFile and $CertKeyFile go together (a client certificate and its PKCS#8 PEM key)")
    val tls = io.sparkgazette.client.Tls(o.get(TrustedCaFile), o.get(CertFile), o.get(CertKeyFile))
    val plain = o.get(Broker).toSeq.flatMap(_.split(',')).map(_.trim).filter(b => b.nonEmpty && !b.startsWith("https://"))
    if (tls != io.sparkgazette.client.Tls() && plain.nonEmpty)
      throw GazetteErrors.invalidOption(Broker, o.get(Broker).get, s"https:// endpoints: TLS options are set, and ${plain.mkString(", ")} is not TLS")
    tls
  }

  private[spark] def uuidPointer(o: Reader): String = {
    val p = o.get(UuidPointer).getOrElse(Framing.DefaultUuidPointer)
    Try(new JsonPointerScanner(p)).failed.foreach(_ => throw GazetteErrors.invalidOption(UuidPointer, p, "a JSON pointer such as /_meta/uuid"))
    if (p.isEmpty) throw GazetteErrors.invalidOption(UuidPointer, p, "a JSON pointer such as /_meta/uuid")
    p
  }

  private[spark] def uuidField(o: Reader): Int =
    o.get(UuidField).map { v =>
      v.toIntOption.filter(n => n >= 1 && n <= (1 << 29) - 1)
        .getOrElse(throw GazetteErrors.invalidOption(UuidField, v, "a protobuf field number from 1 to 536870911"))
    }.getOrElse(Framing.DefaultUuidField)

  /** `earliest`, `latest`, or a JSON object of journal offsets. */
  def offsets(option: String, value: String): OffsetSpec = value.trim.toLowerCase(Locale.ROOT) match {
    case "earliest" => OffsetSpec.Earliest
    case "latest"   => OffsetSpec.Latest
    case _ =>
      val parsed = Try(JournalOffsets.parseJson(value)).getOrElse(
        throw GazetteErrors.invalidOption(option, value, """'earliest', 'latest' or JSON such as {"a/journal": 1024} (-2 earliest, -1 latest)"""))
      parsed.find(_._2 < -2).foreach { case (j, off) =>
        throw GazetteErrors.invalidOption(option, value, s"offsets >= 0, or -2 (earliest) or -1 (latest); journal $j has $off")
      }
      OffsetSpec.Specific(parsed)
  }

  private[spark] def positiveLong(option: String, value: String): Long =
    value.trim.toLongOption.filter(_ > 0).getOrElse(throw GazetteErrors.invalidOption(option, value, "a positive whole number"))

  private[spark] def nonNegativeInt(option: String, value: String): Int =
    value.trim.toIntOption.filter(_ >= 0).getOrElse(throw GazetteErrors.invalidOption(option, value, "a whole number >= 0"))

  /** `250ms`, `30s`, `15m`, `24h`, `7d`, or a number of milliseconds. */
  def duration(option: String, value: String): FiniteDuration = {
    val m = """(?i)\s*(\d+)\s*(ms|s|m|min|h|d)?\s*""".r
    value match {
      case m(n, unit) =>
        val amount = n.toLong
        Option(unit).map(_.toLowerCase(Locale.ROOT)).getOrElse("ms") match {
          case "ms"         => amount.millis
          case "s"          => amount.seconds
          case "m" | "min"  => amount.minutes
          case "h"          => amount.hours
          case _            => amount.days
        }
      case _ => throw GazetteErrors.invalidOption(option, value, "a duration such as 250ms, 30s, 15m, 24h or 7d")
    }
  }

  /** Option values by case-insensitive name, refusing names outside `known`. */
  private[spark] final class Reader(options: Map[String, String], known: Seq[String]) {
    private val byLower = known.map(k => k.toLowerCase(Locale.ROOT) -> k).toMap
    private val values: Map[String, String] = options.flatMap { case (k, v) =>
      byLower.get(k.toLowerCase(Locale.ROOT)) match {
        case Some(name) => Some(name -> v)
        // A session-wide default for the other side (a sink's option while reading) is not this query's.
        case None if allOptions.exists(_.equalsIgnoreCase(k)) && SessionDefaults().get(k.toLowerCase(Locale.ROOT)).contains(v) => None
        case None if SessionDefaults().contains(k.toLowerCase(Locale.ROOT)) => throw GazetteErrors.unknownSessionOption(k, known)
        case None => throw GazetteErrors.unknownOption(k, known)
      }
    }

    def get(name: String): Option[String] = values.get(name)

    def boolean(name: String, default: Boolean): Boolean = values.get(name).map { v =>
      v.trim.toLowerCase(Locale.ROOT) match {
        case "true"  => true
        case "false" => false
        case _       => throw GazetteErrors.invalidOption(name, v, "true or false")
      }
    }.getOrElse(default)
  }

  private def allOptions: Seq[String] = (sourceOptions ++ sinkOptions).distinct

  /** Checks options where the DataFrame is loaded (`load()`, or a writer's `save()`/`start()`), as
    * Kafka does, before Spark says whether they will be read or written: every name must be
    * known, and the options are those of a sink when they name one only sinks take, else a source's.
    * Streaming-only rules (checkpointLocation, endingOffsets) wait for the query to start.
    */
  def validateAtLoad(options: CaseInsensitiveStringMap): Unit = {
    val all = options.asCaseSensitiveMap().asScala.toMap
    val sinkOnly = (sinkOptions.filterNot(sourceOptions.contains) :+ "path").map(_.toLowerCase(Locale.ROOT))
    val sessionOnly = SessionDefaults()
    val explicit = all.filterNot { case (k, v) => sessionOnly.get(k.toLowerCase(Locale.ROOT)).contains(v) }
    if (explicit.keys.exists(k => sinkOnly.contains(k.toLowerCase(Locale.ROOT)))) sink(all, streaming = false)
    else source(options, streaming = false)
  }
}

/** The session's `spark.datasource.gazette.<option>` settings, which Spark adds to every query's
  * options (SessionConfigSupport), by lower-case option name.
  */
private[spark] object SessionDefaults {
  val Prefix = "spark.datasource.gazette."

  def apply(): Map[String, String] =
    org.apache.spark.sql.SparkSession.getActiveSession.map(_.conf.getAll.collect {
      case (k, v) if k.toLowerCase(Locale.ROOT).startsWith(Prefix) => k.substring(Prefix.length).toLowerCase(Locale.ROOT) -> v
    }).getOrElse(Map.empty)
}
