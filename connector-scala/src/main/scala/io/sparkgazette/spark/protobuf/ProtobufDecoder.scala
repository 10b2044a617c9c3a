package io.sparkgazette.spark.protobuf

import com.google.protobuf.Descriptors.Descriptor
import com.google.protobuf.{DynamicMessage, InvalidProtocolBufferException, UninitializedMessageException}
import org.apache.spark.sql.Row
import org.apache.spark.sql.api.java.UDF3
import org.apache.spark.sql.types.StructType

/** Decodes message payloads as `messageName` of a descriptor set, on the executors.
  *
  * It travels as the descriptor set's bytes and rebuilds its descriptors where it runs.
  * `permissive` makes a payload that does not parse a null; otherwise it fails the task with an
  * error that names the journal and offset of the message.
  */
private[protobuf] final class ProtobufDecoder(messageName: String, descriptorSet: Array[Byte], source: String,
    permissive: Boolean)
    extends UDF3[Array[Byte], String, java.lang.Long, Row] {

  @transient private lazy val descriptor: Descriptor = DescriptorSet.message(descriptorSet, messageName, source)
  @transient private lazy val toRow = new ProtobufToRow(descriptor)

  /** The rows' schema; resolving it on the driver also reports a bad set or name before any task runs. */
  def schema: StructType = ProtobufSchema.of(descriptor)

  /** The payload `value` of the message at `begin` of `journal` (both may be null) as a row. */
  override def call(value: Array[Byte], journal: String, begin: java.lang.Long): Row =
    if (value == null) null
    else try toRow(DynamicMessage.parseFrom(descriptor, value))
    catch {
      case e @ (_: InvalidProtocolBufferException | _: UninitializedMessageException) =>
        if (permissive) null
        else throw ProtobufErrors.malformedProtobuf(descriptor.getFullName, journal, begin, e.getMessage)
    }
}
