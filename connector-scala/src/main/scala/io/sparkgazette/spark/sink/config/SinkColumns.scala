package io.sparkgazette.spark
package sink
package config

import io.sparkgazette.spark.errors.GazetteErrors
import org.apache.spark.sql.types.{BinaryType, StringType, StructType}

/** Where the input columns are: `value` (or the whole row as JSON), `journal`, `key`, and
  * `origin`, the input message a row came from (its journal and UUID), which real-time writes
  * derive the row's UUID from (see [[realtime.OriginUuids]]); other writes take it for a column
  * like any other.
  */
private[sink] final case class SinkColumns(schema: StructType, value: Int, journal: Int, key: Int,
    origin: Int = -1) {
  def jsonRows: Boolean = value < 0
}

private[sink] object SinkColumns {

  /** The type of `origin`: a source row's `journal` and `uuid`. */
  val OriginType: StructType = new StructType().add("journal", StringType).add("uuid", StringType)

  /** Validates the input schema: `value` string or binary, `journal` string, `key` string or
    * binary, `origin` a struct of `journal` and `uuid` strings; with a `value` column nothing
    * else is allowed. Without one, rows are written as JSON objects of their columns (ndjson
    * journals only), which leave `origin` out in real-time writes (see [[rows.SinkRows]]).
    */
  def apply(schema: StructType): SinkColumns = {
    def index(name: String) = schema.fieldNames.indexWhere(_.equalsIgnoreCase(name))
    val (value, journal, key) = (index("value"), index("journal"), index("key"))
    // Rows written whole as JSON may have a column of their own named `origin`.
    val origin = Some(index("origin")).filter(i => i >= 0 && (value >= 0 || sameFields(schema(i).dataType, OriginType)))
      .getOrElse(-1)
    if (value >= 0) {
      schema.fields.zipWithIndex.find { case (_, i) => !Set(value, journal, key, origin).contains(i) }.foreach {
        case (f, _) =>
          throw GazetteErrors.extraColumn(f.name)
      }
      if (!Set[Any](StringType, BinaryType).contains(schema(value).dataType))
        throw GazetteErrors.columnType("value", "string or binary", schema(value).dataType.simpleString)
    }
    if (journal >= 0 && schema(journal).dataType != StringType)
      throw GazetteErrors.columnType("journal", "a string", schema(journal).dataType.simpleString)
    if (key >= 0 && !Set[Any](StringType, BinaryType).contains(schema(key).dataType))
      throw GazetteErrors.columnType("key", "string or binary", schema(key).dataType.simpleString)
    if (origin >= 0 && !sameFields(schema(origin).dataType, OriginType))
      throw GazetteErrors.columnType("origin", "a struct<journal: string, uuid: string>",
        schema(origin).dataType.simpleString)
    SinkColumns(schema, value, journal, key, origin)
  }

  private def sameFields(t: org.apache.spark.sql.types.DataType, expected: StructType): Boolean = t match {
    case s: StructType =>
      s.fields.length == expected.fields.length &&
      s.fields.zip(expected.fields).forall { case (a, b) =>
        a.name.equalsIgnoreCase(b.name) && a.dataType == b.dataType
      }
    case _ => false
  }
}
