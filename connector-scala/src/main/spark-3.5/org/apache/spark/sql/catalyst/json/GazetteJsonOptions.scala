package org.apache.spark.sql.catalyst.json

import com.fasterxml.jackson.core.StreamReadConstraints
import org.apache.spark.sql.types.StructType

/** The Gazette connector's way to Spark 3.5's `JSONOptions`, which only Spark's SQL packages may
  * name: Spark 4 made it public.
  */
object GazetteJsonOptions {
  def parser(schema: StructType, options: Map[String, String], timeZone: String,
      corruptColumn: String): (JacksonParser, StreamReadConstraints) = {
    val json = new JSONOptions(options, timeZone, corruptColumn)
    (new JacksonParser(schema, json, false, Nil), json.buildJsonFactory().streamReadConstraints())
  }
}
