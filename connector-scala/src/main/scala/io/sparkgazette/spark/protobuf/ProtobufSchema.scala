package io.sparkgazette.spark.protobuf

import scala.jdk.CollectionConverters._

import com.google.protobuf.Descriptors.FieldDescriptor.Type
import com.google.protobuf.Descriptors.{Descriptor, FieldDescriptor}
import org.apache.spark.sql.types._

/** The Spark type of a protobuf message, field by field.
  *
  * It follows Spark's `from_protobuf` where that is lossless, and widens where it is not:
  * unsigned 32-bit integers become `long` and unsigned 64-bit ones `decimal(20,0)`, so no value
  * wraps around. Enums are their value names, maps are maps, `google.protobuf.Timestamp` is a
  * timestamp and `google.protobuf.Duration` a day-time interval. Recursive messages have no
  * finite schema and are refused.
  */
private[spark] object ProtobufSchema {

  val Timestamp = "google.protobuf.Timestamp"
  val Duration = "google.protobuf.Duration"
  val UnsignedLong: DecimalType = DecimalType(20, 0)

  def of(message: Descriptor): StructType = struct(message, List(message.getFullName))

  private def struct(message: Descriptor, path: List[String]): StructType =
    StructType(message.getFields.asScala.toSeq.map(f => StructField(f.getName, field(f, path))))

  private def field(f: FieldDescriptor, path: List[String]): DataType =
    if (f.isMapField) {
      val entry = f.getMessageType
      MapType(single(entry.findFieldByNumber(1), path), single(entry.findFieldByNumber(2), path))
    } else if (f.isRepeated) ArrayType(single(f, path), containsNull = false)
    else single(f, path)

  private def single(f: FieldDescriptor, path: List[String]): DataType = f.getType match {
    case Type.INT32 | Type.SINT32 | Type.SFIXED32 => IntegerType
    case Type.UINT32 | Type.FIXED32 => LongType
    case Type.INT64 | Type.SINT64 | Type.SFIXED64 => LongType
    case Type.UINT64 | Type.FIXED64 => UnsignedLong
    case Type.FLOAT => FloatType
    case Type.DOUBLE => DoubleType
    case Type.BOOL => BooleanType
    case Type.STRING | Type.ENUM => StringType
    case Type.BYTES => BinaryType
    case Type.MESSAGE | Type.GROUP =>
      val m = f.getMessageType
      m.getFullName match {
        case Timestamp => TimestampType
        case Duration => DayTimeIntervalType()
        case name if path.contains(name) =>
          throw ProtobufErrors.recursiveProtobuf((name :: path).reverse.mkString(" -> "), f.getFullName)
        case name => struct(m, name :: path)
      }
  }
}
