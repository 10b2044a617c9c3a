package io.sparkgazette.spark

import java.util

import io.sparkgazette.spark.source.{MessageToRow, TypedSchema}
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

  // A user's schema reaches getTable without inferSchema: options are checked in both.
  override def supportsExternalMetadata(): Boolean = true

  // Spark calls this where the DataFrame is loaded, for reads and writes: options fail there.
  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    GazetteOptions.validateAtLoad(options)
    MessageToRow.schema(GazetteSourceProvider.includeLabels(options))
  }

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String])
      : Table = {
    val options = new CaseInsensitiveStringMap(properties)
    val typed = TypedSchema.of(schema, GazetteSourceProvider.includeLabels(options),
      GazetteSourceProvider.corruptColumn(options))
    if (typed.isDefined) GazetteOptions.validateAtLoad(options)
    new GazetteTable(typed.fold(schema)(_.table), typed)
  }
}

private object GazetteSourceProvider {
  def includeLabels(options: CaseInsensitiveStringMap): Boolean =
    "true".equalsIgnoreCase(options.getOrDefault(GazetteOptions.IncludeLabels, "false"))

  // The option, else the session's, as Spark's file sources choose it.
  def corruptColumn(options: CaseInsensitiveStringMap): String =
    Option(options.get(GazetteOptions.ColumnNameOfCorruptRecord)).getOrElse(
      SparkSession.getActiveSession.map(_.sessionState.conf.columnNameOfCorruptRecord)
        .getOrElse(TypedSchema.DefaultCorruptColumn))
}
