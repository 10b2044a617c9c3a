package io.sparkgazette.spark
package source
package rows

/** The rows a scan makes: `columns`, the connector's columns it reads (names of
  * [[MessageToRow.schema]]: top-level, or inside [[TypedSchema.Meta]] when the rows are typed),
  * and, with a schema, the message fields it parses.
  */
private[source] final case class RowShape(columns: Seq[String], typed: Option[TypedRead] = None)
