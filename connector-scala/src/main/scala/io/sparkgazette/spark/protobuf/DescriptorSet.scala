package io.sparkgazette.spark.protobuf

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import com.google.protobuf.DescriptorProtos.{FileDescriptorProto, FileDescriptorSet}
import com.google.protobuf.Descriptors.{Descriptor, FileDescriptor}
import com.google.protobuf.{
  AnyProto, DurationProto, EmptyProto, FieldMaskProto, StructProto, TimestampProto, WrappersProto
}

/** A descriptor set as `protoc --descriptor_set_out` writes it, resolved into message descriptors.
  *
  * Imports the set does not hold are taken from protobuf's own well-known types, so a set built
  * without `--include_imports` still works when it only imports those.
  */
private[spark] object DescriptorSet {

  private val wellKnown: Map[String, FileDescriptor] =
    Seq(
      AnyProto.getDescriptor,
      DurationProto.getDescriptor,
      EmptyProto.getDescriptor,
      FieldMaskProto.getDescriptor,
      StructProto.getDescriptor,
      TimestampProto.getDescriptor,
      WrappersProto.getDescriptor
    )
      .map(f => f.getName -> f).toMap

  /** The message `name` of the set in `bytes`: its full name (`demo.Event`, also `.demo.Event`),
    * or its simple name when only one message of the set has it. `source` names the set in errors.
    */
  def message(bytes: Array[Byte], name: String, source: String): Descriptor = {
    val messages = resolve(bytes, source).flatMap(f => all(f.getMessageTypes.asScala.toSeq))
      .filterNot(_.getOptions.getMapEntry)
    val wanted = name.stripPrefix(".")
    messages.find(_.getFullName == wanted).orElse(messages.filter(_.getName == wanted) match {
      case Seq(only) => Some(only)
      case _ => None
    }).getOrElse(throw ProtobufErrors.unknownProtobufMessage(name, source, messages.map(_.getFullName)))
  }

  private def all(ds: Seq[Descriptor]): Seq[Descriptor] = ds.flatMap(d => d +: all(d.getNestedTypes.asScala.toSeq))

  private def resolve(bytes: Array[Byte], source: String): Seq[FileDescriptor] = {
    val set = try FileDescriptorSet.parseFrom(bytes)
    catch {
      case e: com.google.protobuf.InvalidProtocolBufferException =>
        throw ProtobufErrors.badDescriptorSet(source, s"it is not a FileDescriptorSet (${e.getMessage})")
    }
    val protos: Map[String, FileDescriptorProto] = set.getFileList.asScala.map(f => f.getName -> f).toMap
    val built = mutable.Map.empty[String, FileDescriptor]

    // Dependencies first; a file's dependencies must be built before the file itself.
    def build(name: String, importedBy: List[String]): FileDescriptor = built.getOrElse(
      name, {
        if (importedBy.contains(name))
          throw ProtobufErrors.badDescriptorSet(
            source, s"files import each other in a cycle: ${(name :: importedBy).reverse.mkString(" -> ")}")
        val file = protos.get(name) match {
          case Some(proto) =>
            val deps = proto.getDependencyList.asScala.map(build(_, name :: importedBy)).toArray
            try FileDescriptor.buildFrom(proto, deps)
            catch {
              case e: com.google.protobuf.Descriptors.DescriptorValidationException =>
                throw ProtobufErrors.badDescriptorSet(source, s"file $name is invalid: ${e.getMessage}")
            }
          case None => wellKnown.getOrElse(
              name,
              throw ProtobufErrors.badDescriptorSet(source,
                s"${importedBy.headOption.getOrElse("it")} imports $name, which the set does not hold; " +
                  "write the set with protoc's --include_imports")
            )
        }
        built(name) = file
        file
      }
    )

    set.getFileList.asScala.map(f => build(f.getName, Nil)).toSeq
  }
}
