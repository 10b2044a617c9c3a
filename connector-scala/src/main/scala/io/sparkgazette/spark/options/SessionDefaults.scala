package io.sparkgazette.spark
package options

import java.util.Locale

/** The session's `spark.datasource.gazette.<option>` settings, which Spark adds to every query's
  * options (SessionConfigSupport), by lower-case option name.
  */
private[spark] object SessionDefaults {
  val Prefix = "spark.datasource.gazette."

  def apply(): Map[String, String] =
    org.apache.spark.sql.SparkSession.getActiveSession.map(_.conf.getAll.collect {
      case (k, v) if k.toLowerCase(Locale.ROOT).startsWith(Prefix) =>
        k.substring(Prefix.length).toLowerCase(Locale.ROOT) -> v
    }).getOrElse(Map.empty)
}
