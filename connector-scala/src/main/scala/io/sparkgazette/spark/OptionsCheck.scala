package io.sparkgazette.spark

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import io.sparkgazette.spark.options.{GazetteOptions, SessionDefaults}
import io.sparkgazette.spark.sink.config.SinkOptions
import io.sparkgazette.spark.source.offsets.SourceOptions
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** Options checked by the side that takes them: the source's by [[SourceOptions]], the sink's by
  * [[SinkOptions]], each where Spark says which it is (a load without a schema, a scan, a write).
  * Where Spark does not say, only names that neither side takes are refused.
  */
private[spark] object OptionsCheck {
  private val mapper = new ObjectMapper()

  /** `getTable` is handed a read's schema and a write's alike: each side checks its own options
    * when Spark asks it to read or to write; here, only a name no side takes is refused (with
    * `path`, which `save(journal)` sets, and which a source refuses when it reads).
    */
  def names(options: java.util.Map[String, String]): Unit =
    new GazetteOptions.Reader(options.asScala.toMap.filterNot(_._1.equalsIgnoreCase("path")), GazetteOptions.allNames,
      GazetteOptions.sparkAllNames)

  /** For the Python helpers (through py4j, on a classic session): `optionsJson`, with the
    * session's defaults (`spark.datasource.gazette.<option>`, as Spark adds them to a query's),
    * checked by `side` (`source` or `sink`) as the query will check them when it runs. A stream's
    * writer reaches the sink only then; this says what is wrong where the options were given.
    */
  def check(session: SparkSession, side: String, optionsJson: String, streaming: Boolean): Unit = {
    val set = mapper.readTree(optionsJson).properties().asScala.map(e => e.getKey -> e.getValue.asText()).toMap
    val previous = SparkSession.getActiveSession
    SparkSession.setActiveSession(session)
    try {
      val defaults = SessionDefaults().filterNot { case (k, _) => set.keys.exists(_.equalsIgnoreCase(k)) }
      val all = defaults ++ set
      side match {
        case "source" => SourceOptions.parse(new CaseInsensitiveStringMap(all.asJava), streaming)
        case "sink" => SinkOptions.parse(all, streaming)
        case other => throw new IllegalArgumentException(s"side '$other': source or sink")
      }
    } finally previous.fold(SparkSession.clearActiveSession())(SparkSession.setActiveSession)
  }
}
