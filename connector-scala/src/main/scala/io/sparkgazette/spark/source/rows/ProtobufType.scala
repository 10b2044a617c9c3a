package io.sparkgazette.spark
package source
package rows

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.options.GazetteOptions
import io.sparkgazette.spark.protobuf.{DescriptorSet, ProtobufFunctions, ProtobufSchema}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** The protobuf message type the source parses `application/x-protobuf-fixed` messages as: its
  * name and its descriptor set's bytes, read once on the driver (`file` names it in errors) and
  * resolved again where the rows are parsed.
  */
private[spark] final case class ProtobufType(name: String, descriptorSet: Array[Byte], file: String) {
  @transient lazy val descriptor: com.google.protobuf.Descriptors.Descriptor =
    DescriptorSet.message(descriptorSet, name, file)

  /** The message's fields as columns. */
  def schema: StructType = ProtobufSchema.of(descriptor)

  /** Checks that each field of a schema given with the type (but `corruptColumn`) is the message's field of that name and type. */
  def check(fields: StructType, corruptColumn: String): Unit = {
    val own = schema
    fields.filterNot(_.name == corruptColumn).foreach { f =>
      own.find(_.name == f.name) match {
        case None => throw GazetteErrors.invalidSchema(
            s"field '${f.name}' is not a field of $name (${own.fieldNames.mkString(", ")})")
        case Some(o) if o.dataType.sql != f.dataType.sql =>
          throw GazetteErrors.invalidSchema(
            s"field '${f.name}' is ${f.dataType.sql} in the schema, ${o.dataType.sql} in $name")
        case _ =>
      }
    }
  }
}

private[spark] object ProtobufType {

  /** The type the options name, its descriptor set read through Hadoop's file systems, if they name one. */
  def of(options: CaseInsensitiveStringMap): Option[ProtobufType] = {
    import GazetteOptions.{ProtobufDescriptorFile, ProtobufMessage}
    (Option(options.get(ProtobufMessage)), Option(options.get(ProtobufDescriptorFile))) match {
      case (Some(m), Some(f)) => Some(ProtobufType(m, ProtobufFunctions.read(SparkSession.active, f), f))
      case (None, None) => None
      case (Some(m), None) =>
        throw GazetteErrors.missingOption(ProtobufDescriptorFile, s"the descriptor set that defines $m")
      case (None, Some(f)) =>
        throw GazetteErrors.missingOption(ProtobufMessage, s"the message of $f that the journals hold")
    }
  }
}
