package io.sparkgazette.spark
package source
package rows

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.catalyst.csv.{CSVOptions, UnivocityParser}
import org.apache.spark.sql.types.{StringType, StructField, StructType}

/** CSV payloads parsed by Spark's own CSV parser (what the CSV file source uses), with Spark's CSV
  * options. A Gazette record has no header: its first column is the message's UUID, and the
  * schema's fields are the columns after it, in order. Quoting is Gazette's (RFC 4180, quotes
  * doubled inside quoted fields), whatever the options say.
  */
private[rows] object CsvPayloads {

  /** Gazette's quoting, over the user's options. */
  val Quoting: Map[String, String] = Map("sep" -> ",", "quote" -> "\"", "escape" -> "\"", "header" -> "false")

  def parser(fields: StructType, required: StructType, corrupt: Option[String], options: Map[String, String],
      timeZone: String, corruptColumn: String): PayloadParser = {
    def parsed(s: StructType) = StructType(s.filterNot(f => corrupt.contains(f.name)))
    // The UUID's column, under the one name no field can have.
    val data = StructType(StructField(TypedSchema.Meta, StringType) +: parsed(fields).fields)
    // Spark's column pruning keeps the columns a query does not select from becoming strings; it
    // also stops Spark's parser from seeing a record's width, which is checked here instead: the
    // framing holds every record of a read to the width of the first, so the first a parser sees
    // stands for all. With a corrupt-record column, Spark's parser checks each record's width (it
    // makes the malformed record's row).
    def csvOptions = new CSVOptions(options ++ Quoting, corrupt.isEmpty, timeZone, corruptColumn)
    if (corrupt.isDefined) {
      val univocity = new UnivocityParser(data, parsed(required), csvOptions)
      PayloadParser.failureSafe(payload => univocity.parse(line(payload, payload.length)).toList, required, corrupt)
    } else {
      // Without a corrupt-record column nothing needs the columns after the last one the query
      // reads: the parser gets the record up to there, however wide the rest (a wide last column
      // the query skips is never tokenized).
      val read = parsed(required).fieldNames.toSet
      val columns = data.fields.lastIndexWhere(f => read.contains(f.name)).max(0) + 1
      val univocity = new UnivocityParser(StructType(data.take(columns)), parsed(required), csvOptions)
      val parse = PayloadParser.failureSafe(
        payload => univocity.parse(line(payload, prefix(payload, columns))).toList, required, corrupt)
      var width = -1
      payload => {
        if (width < 0) width = CsvPayloads.width(payload)
        if (width == data.length) parse(payload)
        else Left(s"the record has $width columns, the schema ${data.length - 1} after the UUID's")
      }
    }
  }

  // The record with a line ending, as Spark's parser reads a line: it ends the record there rather
  // than at the end of its input. Gazette's reader (Go's encoding/csv) drops a carriage return
  // before a line feed, inside quoted fields too.
  private def line(payload: Array[Byte], until: Int): String = {
    val s = new String(payload, 0, until, UTF_8)
    (if (s.indexOf('\r') >= 0) s.replace("\r\n", "\n") else s) + "\n"
  }

  /** Where the record's first `columns` columns end: at the comma after them, outside quotes. */
  private[source] def prefix(b: Array[Byte], columns: Int): Int = {
    var n = 0
    var quoted = false
    var i = 0
    while (i < b.length) {
      val c = b(i)
      if (c == '"') quoted = !quoted
      else if (c == ',' && !quoted) { n += 1; if (n == columns) return i }
      i += 1
    }
    b.length
  }

  /** How many columns a record has: its commas outside quotes, plus one. */
  private[source] def width(b: Array[Byte]): Int = {
    var n = 1
    var quoted = false
    var i = 0
    while (i < b.length) {
      val c = b(i)
      if (c == '"') quoted = !quoted // a doubled quote inside quotes toggles twice
      else if (c == ',' && !quoted) n += 1
      i += 1
    }
    n
  }
}
