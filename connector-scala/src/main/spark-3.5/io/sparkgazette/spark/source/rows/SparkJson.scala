package io.sparkgazette.spark
package source
package rows

import com.fasterxml.jackson.core.StreamReadConstraints
import org.apache.spark.sql.catalyst.json.{GazetteJsonOptions, JacksonParser}
import org.apache.spark.sql.types.StructType

/** Spark's JSON parser as `from_json` sets it up, and the limits its Jackson puts on any document.
  * Spark 3.5's `JSONOptions` is private to Spark's SQL packages (see [[GazetteJsonOptions]]), and
  * its Jackson (2.15) puts no limit on names.
  */
private[source] object SparkJson {

  def parser(schema: StructType, options: Map[String, String], timeZone: String,
      corruptColumn: String): (JacksonParser, JsonPayloads.Limits) = {
    val (parser, constraints) = GazetteJsonOptions.parser(schema, options, timeZone, corruptColumn)
    (parser, limits(constraints))
  }

  def limits(c: StreamReadConstraints): JsonPayloads.Limits =
    JsonPayloads.Limits(c.getMaxNestingDepth, c.getMaxNumberLength, Int.MaxValue, c.getMaxStringLength)
}
