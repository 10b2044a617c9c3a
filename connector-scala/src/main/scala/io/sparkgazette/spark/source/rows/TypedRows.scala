package io.sparkgazette.spark
package source
package rows

import io.sparkgazette.message.{Envelope, RawMessage}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, JoinedRow}

/** A typed scan's rows of one journal: the fields `parse` makes of each message's payload, then,
  * when the query reads any, the connector's columns in their struct, made by `meta`.
  */
private[source] final class TypedRows(parse: PayloadParser, meta: Option[MessageToRow.Converter]) {

  /** The message's row, or why its payload is malformed. */
  def apply(env: Envelope[RawMessage]): Either[String, InternalRow] =
    parse(env.message) match {
      case Right(fields) =>
        Right(meta.fold(fields)(m => new JoinedRow(fields, new GenericInternalRow(Array[Any](m(env))))))
      case left => left
    }
}
