package io.sparkgazette.spark
package sink

import org.apache.spark.sql.types.{BinaryType, StringType, StructType}

/** Where the input columns are: `value` (or the whole row as JSON), `journal`, `key`. */
private[spark] final case class SinkColumns(schema: StructType, value: Int, journal: Int, key: Int) {
  def jsonRows: Boolean = value < 0
}

private[spark] object SinkColumns {

  /** Validates the input schema: `value` string or binary, `journal` string, `key` string or
    * binary; with a `value` column nothing else is allowed. Without one, rows are written as
    * JSON objects of all their columns (ndjson journals only).
    */
  def apply(schema: StructType): SinkColumns = {
    def index(name: String) = schema.fieldNames.indexWhere(_.equalsIgnoreCase(name))
    val (value, journal, key) = (index("value"), index("journal"), index("key"))
    if (value >= 0) {
      schema.fields.zipWithIndex.find { case (_, i) => i != value && i != journal && i != key }.foreach { case (f, _) =>
        throw GazetteErrors.extraColumn(f.name)
      }
      if (!Set[Any](StringType, BinaryType).contains(schema(value).dataType))
        throw GazetteErrors.columnType("value", "string or binary", schema(value).dataType.simpleString)
    }
    if (journal >= 0 && schema(journal).dataType != StringType)
      throw GazetteErrors.columnType("journal", "a string", schema(journal).dataType.simpleString)
    if (key >= 0 && !Set[Any](StringType, BinaryType).contains(schema(key).dataType))
      throw GazetteErrors.columnType("key", "string or binary", schema(key).dataType.simpleString)
    SinkColumns(schema, value, journal, key)
  }
}
