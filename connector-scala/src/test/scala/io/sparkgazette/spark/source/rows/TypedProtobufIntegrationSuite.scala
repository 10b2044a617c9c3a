package io.sparkgazette.spark
package source
package rows

import java.nio.file.Files

import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type
import com.google.protobuf.DescriptorProtos.{DescriptorProto, FileDescriptorProto, FileDescriptorSet}
import io.sparkgazette.message.{Framing, Uuid}
import io.sparkgazette.spark.protobuf.ProtobufDecodingSuite.{field, set}
import io.sparkgazette.testing.{Journals, Judge, SparkClusterSuite}
import org.apache.spark.sql.Row
import org.scalatest.funsuite.AnyFunSuite

/** Rows of `application/x-protobuf-fixed` journals decoded in the scan with a descriptor, against
  * a real broker, judged by Gazette's reader: the test decodes the payloads the judge prints itself.
  */
class TypedProtobufIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  import TypedRowsIntegrationSuite.message

  // The judge's messages: its UUID in field 1, "<producer>-<seq>" in field 2, padding in field 3.
  private def descriptorFile(s: FileDescriptorSet): String = {
    val f = Files.createTempFile("doc", ".desc")
    Files.write(f, s.toByteArray)
    f.toString
  }
  private lazy val docs = descriptorFile(set(FileDescriptorProto.newBuilder().setName("doc.proto")
        .setPackage("judge").setSyntax("proto3").addMessageType(DescriptorProto.newBuilder().setName("Doc")
            .addField(field("uuid", 1, Type.TYPE_BYTES)).addField(field("name", 2, Type.TYPE_STRING))
            .addField(field("pad", 3, Type.TYPE_BYTES))).build()))

  private def journal(name: String): String = {
    Journals.create(client, Journals.spec(name, labels = Seq("content-type" -> Framing.ProtobufFixed)))
    name
  }

  private def reader(journal: String, descriptor: String = docs, message: String = "judge.Doc") =
    spark.read.format("gazette").option("broker", cluster.broker).option("journals", journal)
      .option("protobufMessage", message).option("protobufDescriptorFile", descriptor)

  /** The test's own decoding of a payload the judge prints in hex (length-delimited fields only,
    * as the judge writes): fields 2 and 3, empty when absent.
    */
  private def fields(hex: String): (String, Array[Byte]) = {
    val b = hex.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray
    var i = 0
    def varint(): Int = {
      var v, shift = 0
      while ({ v |= (b(i) & 0x7f) << shift; shift += 7; i += 1; b(i - 1) < 0 }) {}
      v
    }
    val found = scala.collection.mutable.Map[Int, Array[Byte]]().withDefaultValue(Array.emptyByteArray)
    while (i < b.length) {
      val key = varint()
      assert((key & 7) == 2, s"the judge writes length-delimited fields only: $hex")
      val n = varint()
      found(key >>> 3) = b.slice(i, i + n)
      i += n
    }
    (new String(found(2), "UTF-8"), found(3))
  }

  test("protobuf messages decoded in the scan are Go's reader's, field by field; the descriptor types the rows") {
    val j = journal("typed-pb/docs/part-000")
    Judge.publishRandom(cluster.broker, j, seed = 21L)
    val expected = Judge.read(cluster.broker, j).map(r => (r.begin, fields(r.payload)))
    assert(expected.size > 10)
    val df = reader(j).load()
    assert(df.schema.fieldNames.toSeq == Seq("uuid", "name", "pad", TypedSchema.Meta))
    val got = df.select("_gazette.begin", "name", "pad", "uuid", "_gazette.uuid").collect().toSeq
    assert(got.map(r => (r.getLong(0), r.getString(1), r.getAs[Array[Byte]](2).toSeq)).sortBy(_._1) ==
      expected.map { case (b, (n, p)) => (b, n, p.toSeq) }.sortBy(_._1))
    // The UUID field is the message's UUID, as the framing reads it (none: outside transactions).
    assert(got.forall(r =>
        Option(r.getAs[Array[Byte]](3)).filter(_.nonEmpty).map(Uuid.fromBytes(_, 0).toString).orNull ==
          r.getString(4)))
    // A schema may name fewer of the message's fields; only those are converted.
    val names = reader(j).schema("name STRING").load()
    assert(names.schema.fieldNames.toSeq == Seq("name", TypedSchema.Meta))
    assert(names.select("name").collect().map(_.getString(0)).sorted.toSeq == expected.map(_._2._1).sorted)
  }

  test(
    "a schema that does not fit the message is refused at load; without the descriptor a protobuf journal cannot be typed") {
    val j = journal("typed-pb/refused/part-000")
    Judge.publishRandom(cluster.broker, j, seed = 22L)
    val wrongType = intercept[Exception](reader(j).schema("name INT").load())
    assert(message(wrongType).contains("GAZETTE_INVALID_SCHEMA") && message(wrongType).contains("'name'"),
      message(wrongType))
    val unknown = intercept[Exception](reader(j).schema("nope STRING").load())
    assert(message(unknown).contains("not a field of judge.Doc"), message(unknown))
    val half = intercept[Exception](spark.read.format("gazette").option("broker", cluster.broker)
        .option("journals", j).option("protobufMessage", "judge.Doc").load())
    assert(message(half).contains("protobufDescriptorFile"), message(half))
    val untyped = intercept[Exception](spark.read.format("gazette").option("broker", cluster.broker)
        .option("journals", j).schema("name STRING").load().collect())
    assert(message(untyped).contains(s"Journal $j") && message(untyped).contains("protobufMessage"), message(untyped))
  }

  test("a payload that is not the message fails naming journal and offset, is skipped, or is a row holding its hex") {
    val j = journal("typed-pb/malformed/part-000")
    // Strict's field 2 is a message: bytes that frame well (the framing finds field 1) but do not decode as one.
    val strict = descriptorFile(set(FileDescriptorProto.newBuilder().setName("strict.proto").setPackage("judge")
          .setSyntax("proto3").addMessageType(DescriptorProto.newBuilder().setName("Inner")
              .addField(field("n", 1, Type.TYPE_INT32)))
          .addMessageType(DescriptorProto.newBuilder().setName("Strict").addField(field("uuid", 1, Type.TYPE_BYTES))
              .addField(field("inner", 2, Type.TYPE_MESSAGE).setTypeName(".judge.Inner"))).build()))
    def frame(payload: Int*): Array[Byte] =
      Array(0x66, 0x33, 0x93, 0x36, payload.length, 0, 0, 0).map(_.toByte) ++ payload.map(_.toByte)
    val good = frame(0x12, 0x02, 0x08, 0x07) // inner { n: 7 }
    val bad = frame(0x12, 0x02, 0xff, 0xff)
    val w = Judge.script(cluster.broker, j)
    try { w.raw(good).raw(bad).raw(good).sync() }
    finally w.close()
    assert(Judge.read(cluster.broker, j).map(_.begin) == Seq(0L, 12L, 24L), "Go's reader frames all three")
    val e = intercept[Exception](reader(j, strict, "judge.Strict").load().collect())
    assert(message(e).contains(s"journal $j at offset 12") && message(e).contains("judge.Strict"), message(e))
    val skipped = reader(j, strict, "judge.Strict").option("failOnMalformed", "false").load()
      .select("_gazette.begin", "inner.n").collect().toSeq
    assert(skipped == Seq(Row(0L, 7), Row(24L, 7)))
    val permissive = reader(j, strict, "judge.Strict").schema("inner STRUCT<n: INT>, _corrupt_record STRING").load()
      .select("_gazette.begin", "inner.n", "_corrupt_record").collect().toSeq
    assert(permissive == Seq(Row(0L, 7, null), Row(12L, null, "1202ffff"), Row(24L, 7, null)))
  }
}
