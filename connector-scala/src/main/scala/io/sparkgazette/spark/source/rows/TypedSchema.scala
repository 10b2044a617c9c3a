package io.sparkgazette.spark
package source
package rows

import java.util.Locale

import io.sparkgazette.spark.errors.GazetteErrors
import org.apache.spark.sql.types.{DataType, StringType, StructField, StructType}

/** The rows of a source given a schema (`.schema(...)`, or a protobuf descriptor's): the
  * message's fields as top-level columns, parsed in the scan, and the connector's own columns
  * (`journal`, `begin`, `value`, `uuid`, ...) in one struct, [[Meta]], so that no field of a
  * message can take a name the connector needs: only [[Meta]] itself is reserved.
  *
  * `fields`: the message's fields as the user gave them, Spark's corrupt-record column
  * (`corruptColumn`, a string) among them when the query keeps malformed messages as rows.
  */
private[spark] final case class TypedSchema(fields: StructType, includeLabels: Boolean, corruptColumn: String) {

  /** The table's schema: the fields, then the connector's struct. */
  def table: StructType = fields.add(StructField(TypedSchema.Meta, TypedSchema.metaType(includeLabels),
      nullable = false))

  /** Whether malformed messages become rows (Spark's PERMISSIVE): the schema holds the corrupt-record column. */
  def permissive: Boolean = fields.fieldNames.contains(corruptColumn)

  /** What a query that reads `required` (a pruning of [[table]], nested fields of [[TypedSchema.Meta]]
    * pruned too) reads: the message's fields it names, in the schema's order, and the names of
    * the connector's columns it names inside the struct, or None when it reads none. A query that
    * reads the corrupt-record column parses every field, so that which messages are malformed
    * does not depend on what it selects.
    */
  def prune(required: StructType): TypedSchema.Pruned = {
    val names = if (required.fieldNames.contains(corruptColumn)) fields.fieldNames.toSet else required.fieldNames.toSet
    val meta = required.find(_.name == TypedSchema.Meta).map {
      case StructField(_, s: StructType, _, _) => MessageToRow.pruned(includeLabels, s).fieldNames.toSeq
      case _ => MessageToRow.schema(includeLabels).fieldNames.toSeq
    }
    TypedSchema.Pruned(StructType(fields.filter(f => names.contains(f.name))), meta)
  }
}

private[spark] object TypedSchema {

  /** The struct column of the connector's own columns. */
  val Meta = "_gazette"

  /** Spark's default name of the corrupt-record column (`spark.sql.columnNameOfCorruptRecord`). */
  val DefaultCorruptColumn = "_corrupt_record"

  def metaType(includeLabels: Boolean): StructType = MessageToRow.schema(includeLabels)

  /** The columns a query reads: `fields` parsed from each message, `meta` the connector's. */
  final case class Pruned(fields: StructType, meta: Option[Seq[String]]) {
    def schema(includeLabels: Boolean): StructType = meta.fold(fields)(m =>
      fields.add(StructField(Meta,
          MessageToRow.pruned(includeLabels,
            StructType(m.map(n =>
                StructField(n, StringType)))), nullable = false)))
  }

  /** The typed schema of a table Spark hands the source, or None for the untyped one (no
    * `.schema`, or one equal to the untyped rows): a table schema that already ends with the
    * connector's struct (a descriptor's, as the source inferred it) is taken without it.
    */
  def of(schema: StructType, includeLabels: Boolean, corruptColumn: String): Option[TypedSchema] =
    if (schema == MessageToRow.schema(includeLabels)) None
    else {
      val fields = schema.lastOption match {
        case Some(StructField(Meta, t, _, _)) if t == metaType(includeLabels) => StructType(schema.init)
        case _ => schema
      }
      fields.find(_.name.equalsIgnoreCase(Meta)).foreach(f =>
        throw GazetteErrors.invalidSchema(s"field '${f.name}' takes the name of the connector's column $Meta; " +
          "rename the field"))
      if (fields.isEmpty) throw GazetteErrors.invalidSchema("it has no fields")
      duplicate(fields).foreach(n => throw GazetteErrors.invalidSchema(s"field '$n' appears more than once"))
      fields.find(_.name == corruptColumn).foreach { f =>
        if (f.dataType != StringType || !f.nullable)
          throw GazetteErrors.invalidSchema(
            s"the corrupt-record column '${f.name}' (option columnNameOfCorruptRecord) must be a nullable " +
              s"string, not ${typeName(f.dataType)}")
      }
      Some(TypedSchema(fields, includeLabels, corruptColumn))
    }

  private def duplicate(fields: StructType): Option[String] =
    fields.fieldNames.groupBy(_.toLowerCase(Locale.ROOT)).collectFirst { case (_, ns) if ns.length > 1 => ns.head }

  private def typeName(t: DataType): String = t.simpleString
}
