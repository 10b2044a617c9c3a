package io.sparkgazette.spark.protobuf

import java.math.{BigDecimal => JBigDecimal}
import java.nio.file.Files
import java.time.{Duration => JDuration, Instant}

import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.{Label, Type}
import com.google.protobuf.DescriptorProtos.{
  DescriptorProto, EnumDescriptorProto, EnumValueDescriptorProto, FieldDescriptorProto, FileDescriptorProto,
  FileDescriptorSet, MessageOptions, OneofDescriptorProto
}
import com.google.protobuf.{ByteString, DynamicMessage, Timestamp, TimestampProto}
import org.apache.spark.sql.types._
import org.apache.spark.sql.{Row, SparkSession}
import org.scalatest.funsuite.AnyFunSuite

class ProtobufDecodingSuite extends AnyFunSuite {
  import ProtobufDecodingSuite._

  private def decoder(set: FileDescriptorSet, name: String = "demo.Event", permissive: Boolean = false) =
    new ProtobufDecoder(name, set.toByteArray, "test.desc", permissive)

  test("the schema widens unsigned integers and maps enums, maps, timestamps and durations") {
    assert(decoder(eventSet).schema == StructType(Seq(
        StructField("i32", IntegerType),
        StructField("s64", LongType),
        StructField("u32", LongType),
        StructField("u64", DecimalType(20, 0)),
        StructField("f", FloatType),
        StructField("d", DoubleType),
        StructField("ok", BooleanType),
        StructField("name", StringType),
        StructField("raw", BinaryType),
        StructField("kind", StringType),
        StructField("tags", ArrayType(StringType, containsNull = false)),
        StructField("counts", MapType(StringType, LongType)),
        StructField("at", TimestampType),
        StructField("took", DayTimeIntervalType()),
        StructField("user", StructType(Seq(StructField("id", LongType), StructField("email", StringType)))),
        StructField("nick", StringType),
        StructField("card", StringType),
        StructField("iban", StringType),
        StructField("history",
          ArrayType(
            StructType(Seq(StructField("id", LongType), StructField("email", StringType))), containsNull = false))
      )))
  }

  test("a message decodes field by field, extremes of unsigned integers included") {
    val event = eventSet.getFileList.get(1)
    val d = com.google.protobuf.Descriptors.FileDescriptor.buildFrom(event,
      Array(TimestampProto.getDescriptor, com.google.protobuf.DurationProto.getDescriptor)).findMessageTypeByName(
      "Event")
    def f(n: String) = d.findFieldByName(n)
    val user = DynamicMessage.newBuilder(d.findNestedTypeByName("User")).setField(
      f("user").getMessageType.findFieldByName("id"), 7).build()
    val entry = f("counts").getMessageType
    val msg = DynamicMessage.newBuilder(d)
      .setField(f("i32"), -5).setField(f("s64"), Long.MinValue).setField(f("u32"), -1).setField(f("u64"), -1L)
      .setField(f("f"), 1.5f).setField(f("d"), 2.25).setField(f("ok"), true).setField(f("name"), "ada")
      .setField(f("raw"), ByteString.copyFrom(Array[Byte](0, 1, -1)))
      .setField(f("kind"), d.findEnumTypeByName("Kind").findValueByName("REFUND"))
      .addRepeatedField(f("tags"), "a").addRepeatedField(f("tags"), "b")
      .addRepeatedField(f("counts"),
        DynamicMessage.newBuilder(entry).setField(entry.findFieldByNumber(1), "x")
          .setField(entry.findFieldByNumber(2), 3L).build())
      .setField(f("at"), Timestamp.newBuilder().setSeconds(1700000000L).setNanos(123000).build())
      .setField(f("took"), com.google.protobuf.Duration.newBuilder().setSeconds(90).build())
      .setField(f("user"), user).setField(f("card"), "4111")
      .addRepeatedField(f("history"), user)
      .build()

    val row = decoder(eventSet).call(msg.toByteArray, "a/journal", 10L)
    assert(row.getInt(0) == -5 && row.getLong(1) == Long.MinValue)
    assert(row.get(2) == 4294967295L)
    assert(row.get(3) == new JBigDecimal("18446744073709551615"))
    assert(row.get(4) == 1.5f && row.get(5) == 2.25 && row.get(6) == true && row.get(7) == "ada")
    assert(row.getAs[Array[Byte]](8).toSeq == Seq[Byte](0, 1, -1))
    assert(row.get(9) == "REFUND" && row.getSeq[String](10) == Seq("a", "b") &&
      row.getMap[String, Long](11) == Map("x" -> 3L))
    assert(row.get(12) == Instant.ofEpochSecond(1700000000L, 123000) && row.get(13) == JDuration.ofSeconds(90))
    assert(row.getStruct(14) == Row(7L, "") && row.get(15) == null && row.get(16) == "4111" && row.get(17) == null)
    assert(row.getSeq[Row](18) == Seq(Row(7L, "")))
  }

  test("unset fields: null where the field tracks presence, protobuf's default where it does not") {
    val row = decoder(eventSet).call(Array.emptyByteArray, null, null)
    assert(row.getInt(0) == 0 && row.get(3) == JBigDecimal.ZERO && row.get(7) == "" && row.get(9) == "SALE")
    assert(row.getSeq[String](10).isEmpty && row.getMap[String, Long](11).isEmpty)
    // Messages, proto3 `optional` and oneof members.
    assert(Seq(12, 13, 14, 15, 16, 17).forall(row.isNullAt))
  }

  test("bytes that are not the message fail naming journal and offset, or are null when permissive") {
    val garbage = Array[Byte](0x0a, 0x7f, 1)
    val e = intercept[IllegalStateException](decoder(eventSet).call(garbage, "events/part-1", 4096L))
    assert(e.getMessage.contains("offset 4096 of journal events/part-1 is not a valid demo.Event"), e.getMessage)
    assert(e.getMessage.contains("PERMISSIVE"))
    assert(decoder(eventSet, permissive = true).call(garbage, "events/part-1", 4096L) == null)
    assert(decoder(eventSet).call(null, "events/part-1", 4096L) == null)
  }

  test("messages are found by full or unique simple name; unknown names list what the set holds") {
    assert(decoder(eventSet, ".demo.Event").schema.size == 19)
    assert(decoder(eventSet, "User").schema.fieldNames.toSeq == Seq("id", "email"))
    val e = intercept[IllegalArgumentException](decoder(eventSet, "demo.Nope").schema)
    assert(
      e.getMessage.contains("test.desc has no message 'demo.Nope'") &&
        e.getMessage.contains("It holds: demo.Event, demo.Event.User, google.protobuf.Timestamp"),
      e.getMessage
    )
  }

  test("recursive messages, missing imports and bytes that are no descriptor set are refused by name") {
    val node = FileDescriptorProto.newBuilder().setName("node.proto").setPackage("demo").setSyntax("proto3")
      .addMessageType(DescriptorProto.newBuilder().setName("Node")
          .addField(field("child", 1, Type.TYPE_MESSAGE).setTypeName(".demo.Node"))).build()
    val recursive = intercept[IllegalArgumentException](decoder(set(node), "demo.Node").schema)
    assert(recursive.getMessage.contains("demo.Node.child") && recursive.getMessage.contains("demo.Node -> demo.Node"),
      recursive.getMessage)

    val missing = intercept[IllegalArgumentException](decoder(set(eventSet.getFileList.get(1).toBuilder
            .addDependency("money.proto").build())).schema)
    assert(missing.getMessage.contains("event.proto imports money.proto") &&
        missing.getMessage.contains("--include_imports"),
      missing.getMessage)

    val notASet = intercept[IllegalArgumentException](new ProtobufDecoder("demo.Event", Array[Byte](1, 2, 3),
        "junk.bin", false).schema)
    assert(notASet.getMessage.contains("junk.bin cannot be used: it is not a FileDescriptorSet"), notASet.getMessage)
  }

  test("from a DataFrame: fromProtobuf reads the set through Hadoop and decodes in the tasks") {
    val spark = SparkSession.builder().master("local[1]").appName("ProtobufDecodingSuite")
      .config("spark.ui.enabled", "false").getOrCreate()
    try {
      val file = Files.createTempFile("event", ".desc")
      Files.write(file, eventSet.toByteArray)
      import spark.implicits._
      val df =
        Seq(("j", 0L, Array.emptyByteArray), ("j", 5L, Array[Byte](0x0a, 0x7f, 1))).toDF("journal", "begin", "value")
      val ok =
        df.where($"begin" === 0L).select(ProtobufFunctions.fromProtobuf($"value", "demo.Event", file.toString).as("m"))
      assert(ok.select("m.kind").as[String].collect().toSeq == Seq("SALE"))
      val permissive = df.select(ProtobufFunctions.fromProtobuf($"value", $"journal", $"begin", "demo.Event",
          file.toUri.toString, "permissive").as("m")).where($"m".isNull)
      assert(permissive.count() == 1)
      val failed = intercept[Exception](df.select(ProtobufFunctions.fromProtobuf($"value", $"journal", $"begin",
            "demo.Event", file.toString, "FAILFAST")).collect())
      assert(
        Iterator.iterate[Throwable](failed)(_.getCause).takeWhile(_ != null)
          .exists(_.getMessage.contains("offset 5 of journal j is not a valid demo.Event")),
        failed
      )
      val badMode = intercept[IllegalArgumentException](ProtobufFunctions.fromProtobuf($"value", $"journal", $"begin",
          "demo.Event", file.toString, "lenient"))
      assert(badMode.getMessage.contains("'mode' has invalid value 'lenient'"))
      Files.delete(file)
    } finally spark.stop()
  }
}

object ProtobufDecodingSuite {

  def field(name: String, number: Int, t: Type, label: Label = Label.LABEL_OPTIONAL): FieldDescriptorProto.Builder =
    FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setType(t).setLabel(label)

  def set(files: FileDescriptorProto*): FileDescriptorSet = {
    val b = FileDescriptorSet.newBuilder()
    files.foreach(b.addFile)
    b.build()
  }

  /** `demo.Event` with a field of each kind; written with --include_imports for Timestamp only,
    * so Duration comes from protobuf's own well-known types.
    */
  val eventSet: FileDescriptorSet = {
    val user = DescriptorProto.newBuilder().setName("User")
      .addField(field("id", 1, Type.TYPE_UINT32)).addField(field("email", 2, Type.TYPE_STRING))
    val countsEntry = DescriptorProto.newBuilder().setName("CountsEntry")
      .setOptions(MessageOptions.newBuilder().setMapEntry(true))
      .addField(field("key", 1, Type.TYPE_STRING)).addField(field("value", 2, Type.TYPE_INT64))
    val kind = EnumDescriptorProto.newBuilder().setName("Kind")
      .addValue(EnumValueDescriptorProto.newBuilder().setName("SALE").setNumber(0))
      .addValue(EnumValueDescriptorProto.newBuilder().setName("REFUND").setNumber(1))
    val event = DescriptorProto.newBuilder().setName("Event").addNestedType(user).addNestedType(
      countsEntry).addEnumType(kind)
      .addField(field("i32", 1, Type.TYPE_SINT32)).addField(field("s64", 2, Type.TYPE_SFIXED64))
      .addField(field("u32", 3, Type.TYPE_UINT32)).addField(field("u64", 4, Type.TYPE_FIXED64))
      .addField(field("f", 5, Type.TYPE_FLOAT)).addField(field("d", 6, Type.TYPE_DOUBLE))
      .addField(field("ok", 7, Type.TYPE_BOOL)).addField(field("name", 8, Type.TYPE_STRING))
      .addField(field("raw", 9, Type.TYPE_BYTES)).addField(field("kind", 10, Type.TYPE_ENUM).setTypeName(
          ".demo.Event.Kind"))
      .addField(field("tags", 11, Type.TYPE_STRING, Label.LABEL_REPEATED))
      .addField(field("counts", 12, Type.TYPE_MESSAGE, Label.LABEL_REPEATED).setTypeName(".demo.Event.CountsEntry"))
      .addField(field("at", 13, Type.TYPE_MESSAGE).setTypeName(".google.protobuf.Timestamp"))
      .addField(field("took", 14, Type.TYPE_MESSAGE).setTypeName(".google.protobuf.Duration"))
      .addField(field("user", 15, Type.TYPE_MESSAGE).setTypeName(".demo.Event.User"))
      .addField(field("nick", 16, Type.TYPE_STRING).setProto3Optional(true).setOneofIndex(1))
      .addField(field("card", 17, Type.TYPE_STRING).setOneofIndex(0))
      .addField(field("iban", 18, Type.TYPE_STRING).setOneofIndex(0))
      .addField(field("history", 19, Type.TYPE_MESSAGE, Label.LABEL_REPEATED).setTypeName(".demo.Event.User"))
      .addOneofDecl(OneofDescriptorProto.newBuilder().setName("payment"))
      .addOneofDecl(OneofDescriptorProto.newBuilder().setName("_nick"))
    set(
      TimestampProto.getDescriptor.toProto,
      FileDescriptorProto.newBuilder().setName("event.proto").setPackage("demo").setSyntax("proto3")
        .addDependency("google/protobuf/timestamp.proto").addDependency("google/protobuf/duration.proto")
        .addMessageType(event).build()
    )
  }
}
