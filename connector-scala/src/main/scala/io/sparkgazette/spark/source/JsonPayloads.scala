package io.sparkgazette.spark
package source

import com.fasterxml.jackson.core.{JsonFactory, JsonParser}
import org.apache.spark.sql.catalyst.json.{JSONOptions, JacksonParser}
import org.apache.spark.sql.types.StructType
import org.apache.spark.unsafe.types.UTF8String

/** ndjson payloads parsed by Spark's own JSON parser (what `from_json` and the JSON file source
  * use), with Spark's JSON options: the same values, time formats and malformed records. Jackson
  * reads the payload's bytes as they are; only a malformed one is ever made a string.
  */
private[spark] object JsonPayloads {

  def parser(required: StructType, corrupt: Option[String], options: JSONOptions): PayloadParser = {
    val parsed = StructType(required.filterNot(f => corrupt.contains(f.name)))
    val jackson = new JacksonParser(parsed, options, false, Nil)
    val open = (factory: JsonFactory, payload: Array[Byte]) => factory.createParser(payload): JsonParser
    val text = (payload: Array[Byte]) => UTF8String.fromBytes(payload)
    PayloadParser.failureSafe(payload => jackson.parse(payload, open, text), required, corrupt)
  }
}
