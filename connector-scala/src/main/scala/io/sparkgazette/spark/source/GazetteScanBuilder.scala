package io.sparkgazette.spark
package source

import io.sparkgazette.spark.source.rows.TypedSchema
import org.apache.spark.sql.connector.read.{Scan, ScanBuilder, SupportsPushDownRequiredColumns}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** Builds the scan of one query with the columns it reads: Spark prunes the others, and the
  * readers never build them (a UUID formatted for a query that counts rows is pure cost; a typed
  * row's fields the query does not select are skipped by the parser).
  */
private[spark] final class GazetteScanBuilder(options: CaseInsensitiveStringMap, typed: Option[TypedSchema] = None)
    extends ScanBuilder with SupportsPushDownRequiredColumns {
  private var required: Option[StructType] = None

  override def pruneColumns(requiredSchema: StructType): Unit = required = Some(requiredSchema)

  override def build(): Scan = new GazetteScan(options, required, typed)
}
