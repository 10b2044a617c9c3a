package io.sparkgazette.spark
package sink
package config

import java.util.Locale

import scala.util.Try

import io.sparkgazette.client.ClientConfig
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.options.BrokerConnection
import io.sparkgazette.spark.options.GazetteOptions
import io.sparkgazette.spark.options.GazetteOptions._

/** Which journals a write goes to. */
private[sink] sealed trait WriteTarget
private[sink] object WriteTarget {
  final case class OneJournal(journal: String) extends WriteTarget
  final case class BySelector(selector: String) extends WriteTarget
}

/** The sink's options, parsed and validated once; [[GazetteOptions.reference]] documents each. */
private[spark] final case class SinkOptions(
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
    readerRingSize: Int = 8192,
    stagingLocation: Option[String] = None
) {
  def clientConfig: ClientConfig = connection.config(broker)
}

private[spark] object SinkOptions {

  private val OverrideAsyncCheck = SparkOptions.AsyncProgressTrackingOverrideSinkSupportCheck

  /** Parses the sink's options; streaming writes need `checkpointLocation`. */
  def parse(options: Map[String, String], streaming: Boolean): SinkOptions = {
    // Spark adds `path` for save(path); a journal name there is the same as option `journal`.
    val path = options.collectFirst { case (k, v) if k.equalsIgnoreCase("path") => v }
    val o = new Reader(options.filterNot(_._1.equalsIgnoreCase("path")), sinkNames, sparkSinkNames)
    // Spark's switch past its check that a sink can take asynchronous progress tracking: that mode
    // persists a batch's offsets only now and then, and after a restart plans a batch id again over
    // another range than the one this sink committed under it, whose new rows would then be lost.
    options.collectFirst { case (k, v) if k.equalsIgnoreCase(OverrideAsyncCheck) => v }
      .filterNot(_.trim.equalsIgnoreCase("false")).foreach { v =>
        throw GazetteErrors.invalidOption(
          OverrideAsyncCheck,
          v,
          "false: the Gazette sink cannot be written with asynchronous progress tracking, which after a restart " +
            "runs a batch it committed again over another range"
        )
      }
    val target = (o.get(Journal).orElse(path), o.get(Selector)) match {
      case (Some(_), Some(_)) => throw GazetteErrors.conflictingOptions(Journal, Selector)
      case (Some(j), None) =>
        if (j.trim.isEmpty || j.contains(','))
          throw GazetteErrors.invalidOption(Journal, j, "one journal name (use 'selector' for several)")
        WriteTarget.OneJournal(j.trim)
      case (None, Some(s)) =>
        Try(io.sparkgazette.client.Selector.parse(s)).failed.foreach(e =>
          throw GazetteErrors.invalidOption(Selector, s, e.getMessage))
        WriteTarget.BySelector(s)
      case (None, None) =>
        throw GazetteErrors.missingOneOf(Journal, Selector, "which journals to write (save(journal) names it too)")
    }
    val mapping = o.get(Mapping).map { m =>
      val name = m.trim.toLowerCase(Locale.ROOT)
      if (!Set("modulo", "rendezvous", "random").contains(name))
        throw GazetteErrors.invalidOption(Mapping, m, "modulo, rendezvous or random")
      name
    }
    val exactlyOnce = o.get(DeliveryGuarantee).map(_.trim.toLowerCase(Locale.ROOT)) match {
      case None | Some("exactly-once") => true
      case Some("at-least-once") => false
      case Some(other) => throw GazetteErrors.invalidOption(DeliveryGuarantee, other, "exactly-once or at-least-once")
    }
    val checkpoint = o.get(CheckpointLocation)
    if (streaming && exactlyOnce && checkpoint.isEmpty)
      throw GazetteErrors.missingOption(
        CheckpointLocation,
        "an exactly-once streaming write keeps its ACK intents there. Set it with " +
          "writeStream.option(\"checkpointLocation\", ...): Spark does not show the session-wide default " +
          "(spark.sql.streaming.checkpointLocation) to sinks. Or set deliveryGuarantee=at-least-once"
      )
    val batchId = o.get(BatchId).map { id =>
      if (streaming) throw GazetteErrors.invalidOption(
        BatchId, id, "no value: batchId applies to batch writes only (a stream keys its epochs itself)")
      if (!id.matches("[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}"))
        throw GazetteErrors.invalidOption(
          BatchId, id, "1 to 128 letters, digits, '.', '_' or '-', not starting with '.'")
      if (!exactlyOnce) throw GazetteErrors.conflictingOptions(BatchId, s"$DeliveryGuarantee=at-least-once")
      if (checkpoint.isEmpty) throw GazetteErrors.missingOption(
        CheckpointLocation, "a batch write with batchId records its ACK intents there")
      id
    }
    SinkOptions(
      broker(o),
      target,
      mapping,
      exactlyOnce,
      uuidPointer(o),
      uuidField(o),
      checkpoint,
      o.get(FlushBytes).map(positiveLong(FlushBytes, _)).map(n => math.min(n, 64L << 20).toInt).getOrElse(1 << 20),
      o.get(TestSinkFault).map(SinkFault.parse),
      batchId,
      connection(o),
      o.get(ReaderRingSize).map(nonNegativeInt(ReaderRingSize, _)).getOrElse(8192),
      o.get(GazetteOptions.StagingLocation).map { l =>
        if (l.trim.isEmpty)
          throw GazetteErrors.invalidOption(GazetteOptions.StagingLocation, l, "a directory's path or URI")
        l.trim
      }
    )
  }
}
