package io.sparkgazette.spark

import java.util

import io.sparkgazette.spark.source.MessageToRow
import org.apache.spark.sql.connector.catalog.{SessionConfigSupport, Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** The `gazette` data source. Its schema is fixed (one row per message), so user schemas are
  * not accepted. Session settings `spark.datasource.gazette.<option>` are every query's defaults.
  */
final class GazetteSourceProvider extends TableProvider with DataSourceRegister with SessionConfigSupport {
  override def shortName(): String = "gazette"

  override def keyPrefix(): String = "gazette"

  // Spark calls this where the DataFrame is loaded, for reads and writes: options fail there.
  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    GazetteOptions.validateAtLoad(options)
    MessageToRow.schema(includeLabels = "true".equalsIgnoreCase(options.getOrDefault(GazetteOptions.IncludeLabels,
        "false")))
  }

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String])
      : Table =
    new GazetteTable(schema)
}
