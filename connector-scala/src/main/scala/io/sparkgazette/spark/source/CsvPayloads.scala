package io.sparkgazette.spark
package source

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.catalyst.csv.{CSVOptions, UnivocityParser}
import org.apache.spark.sql.types.{StringType, StructField, StructType}

/** CSV payloads parsed by Spark's own CSV parser (what the CSV file source uses), with Spark's CSV
  * options. A Gazette record has no header: its first column is the message's UUID, and the
  * schema's fields are the columns after it, in order. Quoting is Gazette's (RFC 4180, quotes
  * doubled inside quoted fields), whatever the options say.
  */
private[spark] object CsvPayloads {

  /** Gazette's quoting, over the user's options. */
  val Quoting: Map[String, String] = Map("sep" -> ",", "quote" -> "\"", "escape" -> "\"", "header" -> "false")

  def parser(fields: StructType, required: StructType, corrupt: Option[String], options: Map[String, String],
      timeZone: String, corruptColumn: String): PayloadParser = {
    def parsed(s: StructType) = StructType(s.filterNot(f => corrupt.contains(f.name)))
    // The UUID's column, under the one name no field can have.
    val data = StructType(StructField(TypedSchema.Meta, StringType) +: parsed(fields).fields)
    // Without Spark's column pruning every column is split, so a record of another width is malformed
    // whatever the query selects; only the selected columns are converted into values.
    val univocity =
      new UnivocityParser(data, parsed(required), new CSVOptions(options ++ Quoting, false, timeZone, corruptColumn))
    PayloadParser.failureSafe(payload => univocity.parse(new String(payload, UTF_8)).toList, required, corrupt)
  }
}
