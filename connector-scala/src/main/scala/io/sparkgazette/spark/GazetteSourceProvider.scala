package io.sparkgazette.spark

import java.util

import io.sparkgazette.spark.options.GazetteOptions
import io.sparkgazette.spark.source.offsets.SourceOptions
import io.sparkgazette.spark.source.rows.{MessageToRow, ProtobufType, TypedSchema}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{SessionConfigSupport, Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** The `gazette` data source: one row per message. Given a schema (`.schema(...)`), the source
  * parses each message into its fields ([[TypedSchema]]). Session settings
  * `spark.datasource.gazette.<option>` are every query's defaults.
  */
final class GazetteSourceProvider extends TableProvider with DataSourceRegister with SessionConfigSupport {
  override def shortName(): String = "gazette"

  override def keyPrefix(): String = "gazette"

  // A user's schema reaches getTable without inferSchema, as a write's DataFrame does.
  override def supportsExternalMetadata(): Boolean = true

  // Spark asks for a schema where a DataFrame is loaded without one, never for a write (a
  // provider that takes external metadata is handed the written DataFrame's): these options are a
  // read's, and the source checks them here. A protobuf message named by them types the rows.
  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    SourceOptions.parse(options, streaming = false)
    val includeLabels = GazetteSourceProvider.includeLabels(options)
    ProtobufType.of(options).fold(MessageToRow.schema(includeLabels))(p =>
      TypedSchema(p.schema, includeLabels, GazetteSourceProvider.corruptColumn(options)).table)
  }

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String])
      : Table = {
    OptionsCheck.names(properties)
    val options = new CaseInsensitiveStringMap(properties)
    val typed = TypedSchema.of(schema, GazetteSourceProvider.includeLabels(options),
      GazetteSourceProvider.corruptColumn(options))
    typed.foreach(t => ProtobufType.of(options).foreach(_.check(t.fields, t.corruptColumn)))
    new GazetteTable(typed.fold(schema)(_.table), typed)
  }
}

private object GazetteSourceProvider {
  def includeLabels(options: CaseInsensitiveStringMap): Boolean =
    "true".equalsIgnoreCase(options.getOrDefault(GazetteOptions.IncludeLabels, "false"))

  // The option, else the session's, as Spark's file sources choose it.
  def corruptColumn(options: CaseInsensitiveStringMap): String =
    Option(options.get(GazetteOptions.Parsing.ColumnNameOfCorruptRecord)).getOrElse(
      SparkSession.getActiveSession.map(_.sessionState.conf.columnNameOfCorruptRecord)
        .getOrElse(TypedSchema.DefaultCorruptColumn))
}
