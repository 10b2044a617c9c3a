package io.sparkgazette.spark

import java.util

import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** The `gazette` data source. Its schema is fixed (one row per message), so user schemas are
  * not accepted.
  */
final class GazetteSourceProvider extends TableProvider with DataSourceRegister {
  override def shortName(): String = "gazette"

  override def inferSchema(options: CaseInsensitiveStringMap): StructType =
    MessageToRow.schema(includeLabels = "true".equalsIgnoreCase(options.getOrDefault(GazetteOptions.IncludeLabels, "false")))

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String]): Table =
    new GazetteTable(schema)
}
