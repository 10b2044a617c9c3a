package io.sparkgazette.spark
package source
package rows

import io.sparkgazette.message.RawMessage
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{BadRecordException, FailureSafeParser, PermissiveMode}
import org.apache.spark.sql.types.StructType

/** Parses a message's payload into a row of the fields a query reads, in the task, straight from
  * the message's bytes. One per task: Spark's parsers keep state between records.
  */
private[rows] trait PayloadParser {

  /** The payload as a row, or the reason it is malformed; with a corrupt-record column
    * (PERMISSIVE), a malformed payload is a row too, holding the payload's text there.
    */
  def apply(payload: Array[Byte]): Either[String, InternalRow]

  /** As the message's payload; a parser may use what the framing found in it. */
  def apply(message: RawMessage): Either[String, InternalRow] = apply(message.bytes)
}

private[rows] object PayloadParser {

  /** A parser over Spark's `raw` parser of payloads: a payload `raw` rejects is malformed, its
    * reason the parser's; PERMISSIVE (`corrupt` names the column, whether or not the query reads
    * it), Spark's FailureSafeParser makes it a row, as Spark's file sources do. `required`: the
    * fields the query reads, the corrupt-record column among them if it does.
    */
  def failureSafe(raw: Array[Byte] => Iterable[InternalRow], required: StructType, corrupt: Option[String])
      : PayloadParser = corrupt match {
    case Some(column) =>
      val safe = new FailureSafeParser[Array[Byte]](raw, PermissiveMode, required, column)
      payload => {
        val rows = safe.parse(payload)
        if (rows.hasNext) Right(rows.next()) else Left("no record")
      }
    case None =>
      payload =>
        try {
          val rows = raw(payload).iterator
          if (rows.hasNext) Right(rows.next()) else Left("no record")
        } catch {
          case e: BadRecordException => Left(reason(e.cause))
        }
  }

  private def reason(e: Throwable): String = e match {
    case null => "not a record of the schema"
    // Spark 4.1 and later wrap the cause to build it only when asked (LazyBadRecordCauseWrapper).
    case lazyCause: Product if lazyCause.productArity == 1 && lazyCause.productElement(0).isInstanceOf[Function0[_]] =>
      reason(lazyCause.productElement(0).asInstanceOf[() => Throwable]())
    case _ =>
      Option(e.getMessage).flatMap(_.linesIterator.take(1).toList.headOption).filter(_.nonEmpty).getOrElse(
        e.getClass.getSimpleName)
  }
}
