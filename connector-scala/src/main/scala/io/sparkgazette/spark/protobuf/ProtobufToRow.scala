package io.sparkgazette.spark.protobuf

import java.math.{BigDecimal => JBigDecimal, BigInteger}
import java.time.{Duration => JDuration, Instant}

import scala.jdk.CollectionConverters._

import com.google.protobuf.Descriptors.FieldDescriptor.Type
import com.google.protobuf.Descriptors.{Descriptor, EnumValueDescriptor, FieldDescriptor}
import com.google.protobuf.{ByteString, Message}
import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow

/** Turns messages of one descriptor into rows of [[ProtobufSchema.of]] that descriptor, or of
  * the top-level fields `only` names, in that order (the others are not converted).
  *
  * A field that tracks presence (a message, a proto2 or proto3 `optional`, a oneof member) and is
  * not set is null; a proto3 field without presence has its default value, as protobuf reads it.
  */
private[spark] final class ProtobufToRow(message: Descriptor, only: Option[Seq[String]] = None) {
  private val fields =
    only.fold(message.getFields.asScala.toArray)(_.map(n => message.findFieldByName(n)).toArray)
  private val converters: Array[Any => Any] = fields.map(ProtobufToRow.converter)

  def apply(m: Message): Row = {
    val values = new Array[Any](fields.length)
    var i = 0
    while (i < fields.length) {
      val f = fields(i)
      values(i) = if (!f.isRepeated && f.hasPresence && !m.hasField(f)) null else converters(i)(m.getField(f))
      i += 1
    }
    new GenericRow(values) // wraps the array; Row.fromSeq would copy it
  }
}

private object ProtobufToRow {

  def converter(f: FieldDescriptor): Any => Any =
    if (f.isMapField) {
      val entry = f.getMessageType
      val (kf, vf) = (entry.findFieldByNumber(1), entry.findFieldByNumber(2))
      val (k, v) = (single(kf), single(vf))
      value =>
        value.asInstanceOf[java.util.List[Message]].asScala.iterator
          .map(e => k(e.getField(kf)) -> v(e.getField(vf))).toMap
    } else if (f.isRepeated) {
      val one = single(f)
      value => value.asInstanceOf[java.util.List[Any]].asScala.iterator.map(one).toIndexedSeq
    } else single(f)

  private def single(f: FieldDescriptor): Any => Any = f.getType match {
    case Type.UINT32 | Type.FIXED32 => v => Integer.toUnsignedLong(v.asInstanceOf[Integer])
    case Type.UINT64 | Type.FIXED64 =>
      v => new JBigDecimal(new BigInteger(java.lang.Long.toUnsignedString(v.asInstanceOf[java.lang.Long])))
    case Type.ENUM => v => v.asInstanceOf[EnumValueDescriptor].getName
    case Type.BYTES => v => v.asInstanceOf[ByteString].toByteArray
    case Type.MESSAGE | Type.GROUP =>
      val m = f.getMessageType
      m.getFullName match {
        case ProtobufSchema.Timestamp | ProtobufSchema.Duration =>
          val (seconds, nanos) = (m.findFieldByName("seconds"), m.findFieldByName("nanos"))
          val build: (Long, Int) => Any =
            if (m.getFullName == ProtobufSchema.Timestamp) (s, n) => Instant.ofEpochSecond(s, n.toLong)
            else (s, n) => JDuration.ofSeconds(s, n.toLong)
          v => {
            val msg = v.asInstanceOf[Message]
            build(msg.getField(seconds).asInstanceOf[java.lang.Long], msg.getField(nanos).asInstanceOf[Integer])
          }
        case _ =>
          val nested = new ProtobufToRow(m)
          v => nested(v.asInstanceOf[Message])
      }
    case _ => identity
  }
}
