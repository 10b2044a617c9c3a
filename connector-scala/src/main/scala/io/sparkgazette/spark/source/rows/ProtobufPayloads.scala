package io.sparkgazette.spark
package source
package rows

import com.google.protobuf.{DynamicMessage, InvalidProtocolBufferException, UninitializedMessageException}
import io.sparkgazette.spark.protobuf.ProtobufToRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.types.StructType
import org.apache.spark.unsafe.types.UTF8String

/** `application/x-protobuf-fixed` payloads decoded as a [[ProtobufType]] by the connector's decoder
  * (the types of `gazette_from_protobuf`); only the fields a query reads are converted. A payload
  * that does not parse is malformed; PERMISSIVE, the corrupt-record column holds it in hex, as
  * the payload's text.
  */
private[rows] object ProtobufPayloads {

  def parser(message: ProtobufType, required: StructType, corrupt: Option[String]): PayloadParser = {
    val descriptor = message.descriptor
    val parsed = StructType(required.filterNot(f => corrupt.contains(f.name)))
    val toRow = new ProtobufToRow(descriptor, Some(parsed.fieldNames.toSeq))
    val toCatalyst = CatalystTypeConverters.createToCatalystConverter(parsed)
    // Where each parsed field and the corrupt-record column go in the required row.
    val at = parsed.fieldNames.map(required.fieldIndex)
    val corruptAt = corrupt.filter(required.fieldNames.contains).map(required.fieldIndex).getOrElse(-1)
    payload => {
      val decoded =
        try Right(toCatalyst(toRow(DynamicMessage.parseFrom(descriptor, payload))).asInstanceOf[InternalRow])
        catch {
          case e @ (_: InvalidProtocolBufferException | _: UninitializedMessageException) =>
            Left(s"not a ${descriptor.getFullName}: ${e.getMessage}")
        }
      decoded match {
        case Right(row) if corrupt.isEmpty => Right(row)
        case Left(reason) if corrupt.isEmpty => Left(reason)
        case other =>
          val out = new GenericInternalRow(required.length)
          other.foreach { row =>
            var i = 0
            while (i < at.length) { out.update(at(i), row.get(i, parsed(i).dataType)); i += 1 }
          }
          if (other.isLeft && corruptAt >= 0) out.update(corruptAt, UTF8String.fromString(hex(payload)))
          Right(out)
      }
    }
  }

  private def hex(b: Array[Byte]): String = b.map(x => f"${x & 0xff}%02x").mkString
}
