package io.sparkgazette.spark

import java.util.Locale

import scala.jdk.CollectionConverters._

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.options.{GazetteOptions, SessionDefaults}
import io.sparkgazette.spark.sink.config.SinkOptions
import io.sparkgazette.spark.source.offsets.SourceOptions
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** Checks options where the DataFrame is loaded (`load()`, or a writer's `save()`/`start()`), as
  * Kafka does, before Spark says whether they will be read or written: every name must be known,
  * and the options are those of a sink when they name one only sinks take, else a source's.
  * Streaming-only rules (checkpointLocation, endingOffsets) wait for the query to start.
  */
private[spark] object OptionsAtLoad {
  import GazetteOptions.{Reader, Selector, SparkOptions, allNames, sinkNames, sourceNames, sparkSourceOptions}

  def validate(options: CaseInsensitiveStringMap): Unit = {
    val all = options.asCaseSensitiveMap().asScala.toMap
    def lower(names: Seq[String]) = names.map(_.toLowerCase(Locale.ROOT)).toSet
    val sinkOnly = lower(sinkNames.filterNot(sourceNames.contains))
    val sparkWriterOnly = SparkOptions.filterNot(sparkSourceOptions.contains)
    val sourceOnly = lower(sourceNames.filterNot(sinkNames.contains))
    val sessionOnly = SessionDefaults()
    val explicit = all.keys.filterNot(k => sessionOnly.get(k.toLowerCase(Locale.ROOT)).contains(all(k)))
      .map(_.toLowerCase(Locale.ROOT)).toSet
    val sparkWriter = sparkWriterOnly.exists(o => explicit(o.name.toLowerCase(Locale.ROOT)))
    // A path is a sink's journal (save(journal)), and Spark's writer options (asynchronous progress
    // tracking) are a write's, unless a source's own option says this is a read.
    if (explicit.exists(sinkOnly)) SinkOptions.parse(all, streaming = false)
    else if (explicit.exists(sourceOnly)) SourceOptions.parse(options, streaming = false)
    else if (explicit.contains("path") || sparkWriter) SinkOptions.parse(all, streaming = false)
    else if (explicit.contains(Selector.toLowerCase(Locale.ROOT))) SourceOptions.parse(options, streaming = false)
    else {
      // Neither side's journals are named: say what each side takes, once the names are known.
      new Reader(all, allNames, SparkOptions)
      throw GazetteErrors.missingTarget()
    }
  }
}
