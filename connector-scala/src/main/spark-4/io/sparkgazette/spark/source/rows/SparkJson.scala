package io.sparkgazette.spark
package source
package rows

import com.fasterxml.jackson.core.StreamReadConstraints
import org.apache.spark.sql.catalyst.json.{JSONOptions, JacksonParser}
import org.apache.spark.sql.types.StructType

/** Spark's JSON parser as `from_json` sets it up, and the limits its Jackson puts on any document. */
private[source] object SparkJson {

  def parser(schema: StructType, options: Map[String, String], timeZone: String,
      corruptColumn: String): (JacksonParser, JsonPayloads.Limits) = {
    val json = new JSONOptions(options, timeZone, corruptColumn)
    (new JacksonParser(schema, json, false, Nil), limits(json.buildJsonFactory().streamReadConstraints()))
  }

  def limits(c: StreamReadConstraints): JsonPayloads.Limits =
    JsonPayloads.Limits(c.getMaxNestingDepth, c.getMaxNumberLength, c.getMaxNameLength, c.getMaxStringLength)
}
