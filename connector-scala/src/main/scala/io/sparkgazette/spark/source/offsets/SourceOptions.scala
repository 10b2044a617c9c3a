package io.sparkgazette.spark
package source
package offsets

import java.util.Locale

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._
import scala.util.Try

import io.sparkgazette.client.ClientConfig
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.options.GazetteOptions._
import io.sparkgazette.spark.options.{BrokerConnection, GazetteOptions}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** Which journals a query reads. */
private[spark] sealed trait JournalTarget {
  def describe: String
}

private[spark] object JournalTarget {

  /** Journals matching a label selector, discovered again at every trigger. */
  final case class BySelector(selector: String) extends JournalTarget {
    override def describe: String = s"selector '$selector'"
  }

  /** A fixed list of journals. */
  final case class ByName(journals: Seq[String]) extends JournalTarget {
    override def describe: String = s"journals ${journals.mkString(", ")}"
  }
}

/** What a start by time does in a journal with no message at or after the time
  * (option `startingOffsetsByTimestampStrategy`, Kafka's name).
  */
private[source] sealed trait NoMessageAtTime
private[source] object NoMessageAtTime {

  /** Fail, naming the journal and the time. */
  case object Error extends NoMessageAtTime

  /** Start at the journal's write head. */
  case object Latest extends NoMessageAtTime
}

/** The source's options, parsed and validated once; [[GazetteOptions.reference]] documents each. */
private[spark] final case class SourceOptions(
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
    directFragmentReads: Boolean = true,
    connection: BrokerConnection = BrokerConnection(),
    noMessageAtStart: NoMessageAtTime = NoMessageAtTime.Error,
    bytesPerPartition: Long = GazetteOptions.DefaultBytesPerPartition,
    minPartitions: Option[Int] = None,
    splitCommitted: Boolean = true,
    realTimePartitions: Option[Int] = None,
    microBatchLimits: Seq[String] = Nil
) {
  def clientConfig: ClientConfig =
    connection.config(broker).copy(fragmentRoot = fragmentRoot, directFragmentReads = directFragmentReads)

  /** The largest message a read frames: no message can be a row that the sequencer's ring could not hold. */
  def maxMessageBytes: Int = math.min(sequencerRingBytes, Int.MaxValue / 2L).toInt
}

private[spark] object SourceOptions {

  /** Parses the source's options; `streaming` picks the default starting offsets. */
  def parse(options: CaseInsensitiveStringMap, streaming: Boolean): SourceOptions = {
    val o = new Reader(options.asCaseSensitiveMap().asScala.toMap, sourceNames, sparkSourceNames)
    val target = (o.get(Selector), o.get(Journals)) match {
      case (Some(_), Some(_)) => throw GazetteErrors.conflictingOptions(Selector, Journals)
      case (Some(s), None) =>
        Try(io.sparkgazette.client.Selector.parse(s)).failed.foreach(e =>
          throw GazetteErrors.invalidOption(Selector, s, e.getMessage))
        JournalTarget.BySelector(s)
      case (None, Some(j)) =>
        val names = j.split(',').map(_.trim).filter(_.nonEmpty).toSeq
        if (names.isEmpty) throw GazetteErrors.invalidOption(Journals, j, "a comma-separated list of journal names")
        JournalTarget.ByName(names.distinct)
      case (None, None) => throw GazetteErrors.missingOneOf(Selector, Journals, "which journals to read")
    }
    // By time, as Kafka: a timestamp for all journals wins over one per journal, which wins over offsets.
    // Every option given is checked, also one that another takes precedence over.
    for (name <- Seq(EndingOffsets, EndingTimestamp, EndingOffsetsByTimestamp); v <- o.get(name) if streaming)
      throw GazetteErrors.invalidOption(name, v, s"no value: $name applies to batch queries only")
    val endingByOffsets = o.get(EndingOffsets).map(offsets(EndingOffsets, _))
    if (endingByOffsets.contains(OffsetSpec.Earliest))
      throw GazetteErrors.invalidOption(EndingOffsets, "earliest", "'latest' or a JSON object of offsets")
    val ending = Seq(
      o.get(EndingTimestamp).map(v => OffsetSpec.AtTime(epochMillis(EndingTimestamp, v))),
      o.get(EndingOffsetsByTimestamp).map(v => OffsetSpec.AtTimes(timestamps(EndingOffsetsByTimestamp, v))),
      endingByOffsets
    ).flatten.headOption
    val starting = Seq(
      o.get(StartingTimestamp).map(v => OffsetSpec.AtTime(epochMillis(StartingTimestamp, v))),
      o.get(StartingOffsetsByTimestamp).map(v => OffsetSpec.AtTimes(timestamps(StartingOffsetsByTimestamp, v))),
      o.get(StartingOffsets).map(offsets(StartingOffsets, _))
    ).flatten.headOption
    for (s <- starting; e <- ending) startAfterEnd(s, e).foreach { case (j, from, to) =>
      throw GazetteErrors.invalidOption(
        if (o.get(EndingTimestamp).isDefined) EndingTimestamp else EndingOffsetsByTimestamp,
        to.toString,
        s"a time at or after the starting time ($from)${j.map(" for journal " + _).getOrElse("")}"
      )
    }
    val noMessageAtStart = o.get(StartingOffsetsByTimestampStrategy).map(v =>
      v.trim.toLowerCase(Locale.ROOT) match {
        case "error" => NoMessageAtTime.Error
        case "latest" => NoMessageAtTime.Latest
        case _ => throw GazetteErrors.invalidOption(StartingOffsetsByTimestampStrategy, v, "error or latest")
      }).getOrElse(NoMessageAtTime.Error)
    val maxBytes = o.get(MaxBytesPerTrigger).map(positiveLong(MaxBytesPerTrigger, _))
    val minBytes = o.get(MinBytesPerTrigger).map(positiveLong(MinBytesPerTrigger, _))
    for (max <- maxBytes; min <- minBytes if min > max)
      throw GazetteErrors.invalidOption(MinBytesPerTrigger, min.toString, s"at most $MaxBytesPerTrigger ($max)")
    if (o.get(MaxTriggerDelay).isDefined && minBytes.isEmpty)
      throw GazetteErrors.invalidOption(
        MaxTriggerDelay, o.get(MaxTriggerDelay).get, s"to be given together with $MinBytesPerTrigger")
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
        .map(n =>
          if (n > (1 << 24)) throw GazetteErrors.invalidOption(SequencerRingSize, n.toString, "at most 16777216")
          else n.toInt)
        .getOrElse(8192),
      sequencerRingBytes = o.get(SequencerRingBytes).map(positiveLong(SequencerRingBytes, _)).getOrElse(64L << 20),
      fragmentRoot = o.get(FragmentRoot),
      directFragmentReads = o.boolean(DirectFragmentReads, default = true),
      connection = connection(o),
      noMessageAtStart = noMessageAtStart,
      bytesPerPartition = o.get(BytesPerPartition).map(positiveLong(BytesPerPartition, _)).getOrElse(
        DefaultBytesPerPartition),
      minPartitions = o.get(MinPartitions).map { v =>
        Try(v.trim.toInt).toOption.filter(_ > 0).getOrElse(throw GazetteErrors.invalidOption(MinPartitions, v,
            "a whole number from 1 to 2147483647"))
      },
      splitCommitted = o.boolean(SplitCommitted, default = true),
      realTimePartitions = o.get(RealTimePartitions).map { v =>
        Try(v.trim.toInt).toOption.filter(_ > 0).getOrElse(throw GazetteErrors.invalidOption(RealTimePartitions, v,
            "a whole number from 1 to 2147483647"))
      },
      // Real-time batches read until their time is up: these options would be silently ignored.
      microBatchLimits = Seq(MaxBytesPerTrigger, MinBytesPerTrigger, MaxTriggerDelay, MinPartitions).filter(
        o.get(_).isDefined)
    )
  }

  /** `earliest`, `latest`, or a JSON object of journal offsets. */
  def offsets(option: String, value: String): OffsetSpec = value.trim.toLowerCase(Locale.ROOT) match {
    case "earliest" => OffsetSpec.Earliest
    case "latest" => OffsetSpec.Latest
    case _ =>
      val parsed = Try(JournalOffsets.parseJson(value)).getOrElse(
        throw GazetteErrors.invalidOption(
          option, value, """'earliest', 'latest' or JSON such as {"a/journal": 1024} (-2 earliest, -1 latest)"""))
      parsed.find(_._2 < -2).foreach { case (j, off) =>
        throw GazetteErrors.invalidOption(
          option, value, s"offsets >= 0, or -2 (earliest) or -1 (latest); journal $j has $off")
      }
      OffsetSpec.Specific(parsed)
  }

  /** A time in milliseconds since the Unix epoch, as Kafka's `startingTimestamp` takes it. */
  private def epochMillis(option: String, value: String): Long =
    Try(value.trim.toLong).toOption.filter(t => t >= 0 && t <= MaxEpochMillis)
      .getOrElse(throw GazetteErrors.invalidOption(option, value,
          s"milliseconds since 1970-01-01T00:00:00Z, such as 1767225600000, at most $MaxEpochMillis (the last a message UUID's clock can hold)"))

  /** A JSON object of times in milliseconds since the Unix epoch, by journal. */
  private def timestamps(option: String, value: String): Map[String, Long] = {
    val parsed = Try(JournalOffsets.parseJson(value)).getOrElse(
      throw GazetteErrors.invalidOption(
        option, value, """JSON such as {"a/journal": 1767225600000} (milliseconds since 1970)"""))
    parsed.find(t => t._2 < 0 || t._2 > MaxEpochMillis).foreach { case (j, t) =>
      throw GazetteErrors.invalidOption(
        option, value, s"times from 0 to $MaxEpochMillis (milliseconds since 1970); journal $j has $t")
    }
    parsed
  }

  // A start by time after the end by time, in all journals (None) or in one.
  private def startAfterEnd(start: OffsetSpec, end: OffsetSpec): Option[(Option[String], Long, Long)] =
    (start, end) match {
      case (OffsetSpec.AtTime(s), OffsetSpec.AtTime(e)) if s > e => Some((None, s, e))
      case (OffsetSpec.AtTime(s), OffsetSpec.AtTimes(es)) => es.collectFirst { case (j, e) if s > e => (Some(j), s, e) }
      case (OffsetSpec.AtTimes(ss), OffsetSpec.AtTime(e)) => ss.collectFirst { case (j, s) if s > e => (Some(j), s, e) }
      case (OffsetSpec.AtTimes(ss), OffsetSpec.AtTimes(es)) =>
        ss.toSeq.sortBy(_._1).collectFirst { case (j, s) if es.get(j).exists(s > _) => (Some(j), s, es(j)) }
      case _ => None
    }
}
