package io.sparkgazette.spark
package source
package rows

import io.sparkgazette.message.Framing
import io.sparkgazette.spark.options.GazetteOptions
import org.apache.spark.sql.types.StructType

/** What the readers of a typed scan parse: the fields a query reads of `schema`, with Spark's
  * parsing options (`parseOptions`, as given to the source) in the session's time zone.
  */
private[source] final case class TypedRead(schema: TypedSchema, fields: StructType,
    parseOptions: Map[String, String], timeZone: String, protobuf: Option[ProtobufType] = None) {

  private def corrupt: Option[String] = if (schema.permissive) Some(schema.corruptColumn) else None

  /** A parser of payloads of a journal's content type (one per reader: parsers keep state), or why there is none. */
  def parser(contentType: String): Either[String, PayloadParser] = contentType match {
    case Framing.JsonLines =>
      Right(JsonPayloads.parser(fields, corrupt, parseOptions, timeZone, schema.corruptColumn))
    case Framing.Csv =>
      Right(CsvPayloads.parser(schema.fields, fields, corrupt, parseOptions, timeZone, schema.corruptColumn))
    case Framing.ProtobufFixed =>
      protobuf.map(ProtobufPayloads.parser(_, fields, corrupt)).toRight(
        s"rows typed by a schema are parsed from ${Framing.ProtobufFixed} journals as the message the options " +
          s"${GazetteOptions.ProtobufMessage} and ${GazetteOptions.ProtobufDescriptorFile} name; they are not set")
    case other => Left(s"rows typed by a schema cannot be parsed from $other journals")
  }
}
