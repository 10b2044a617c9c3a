package io.sparkgazette.spark
package source

import java.nio.charset.StandardCharsets.UTF_8

import io.sparkgazette.message.Framing
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.{DataType, StructType}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

/** Payloads parsed into typed rows by Spark's parsers, without Spark running: what a row holds,
  * what pruning leaves out, and what is malformed.
  */
class PayloadParsersSuite extends AnyFunSuite {

  private def read(contentType: String, schema: String, select: Seq[String] = Nil,
      options: Map[String, String] = Map.empty): String => Either[String, Seq[Any]] = {
    val fields = StructType.fromDDL(schema)
    val typed = TypedSchema(fields, includeLabels = false, TypedSchema.DefaultCorruptColumn)
    val required = if (select.isEmpty) fields else StructType(fields.filter(f => select.contains(f.name)))
    val parse = TypedRead(typed, required, options, "UTC").parser(contentType).toOption.get
    payload => parse(payload.getBytes(UTF_8)).map(row => values(row, required))
  }

  private def values(row: InternalRow, schema: StructType): Seq[Any] =
    schema.fields.toSeq.zipWithIndex.map { case (f, i) => value(row, i, f.dataType) }

  private def value(row: InternalRow, i: Int, t: DataType): Any =
    if (row.isNullAt(i)) null
    else row.get(i, t) match {
      case s: UTF8String => s.toString
      case other => other
    }

  test("ndjson: a document's members by name; members the schema lacks are ignored, missing ones are null") {
    val json = read(Framing.JsonLines, "user STRING, amount INT")
    assert(json("""{"amount":7,"other":[1,2],"user":"alice"}""") == Right(Seq("alice", 7)))
    assert(json("""{"user":"bob"}""") == Right(Seq("bob", null)))
  }

  test("ndjson: only the selected fields are parsed, so an unselected field of the wrong type is no error") {
    val all = read(Framing.JsonLines, "user STRING, amount INT")
    assert(all("""{"user":"a","amount":"lots"}""").isLeft)
    val amountless = read(Framing.JsonLines, "user STRING, amount INT", select = Seq("user"))
    assert(amountless("""{"user":"a","amount":"lots"}""") == Right(Seq("a")))
  }

  test("ndjson: malformed payloads say why; with the corrupt-record column they are rows holding their text") {
    val json = read(Framing.JsonLines, "user STRING, amount INT")
    assert(json("""{"user":""").isLeft)
    assert(json("""[{"user":"a"}]""").isLeft, "an array is not one document")
    assert(json("").isLeft)
    val permissive = read(Framing.JsonLines, "user STRING, amount INT, _corrupt_record STRING")
    assert(permissive("""{"user":"a","amount":"lots"}""") ==
      Right(Seq("a", null, """{"user":"a","amount":"lots"}""")))
    assert(permissive("""{"user":"a","amount":1}""") == Right(Seq("a", 1, null)))
  }

  test("ndjson: Spark's timestamp options apply") {
    val json = read(Framing.JsonLines, "ts TIMESTAMP", options = Map("timestampFormat" -> "dd/MM/yyyy HH:mm"))
    assert(json("""{"ts":"22/11/2026 12:34"}""") ==
      Right(Seq(java.time.Instant.parse("2026-11-22T12:34:00Z").toEpochMilli * 1000)))
    assert(read(Framing.JsonLines, "ts TIMESTAMP")("""{"ts":"22/11/2026 12:34"}""").isLeft)
  }

  test("CSV: the columns after the UUID, in order; Gazette's quoting; empty is null") {
    val csv = read(Framing.Csv, "user STRING, amount INT, note STRING")
    assert(csv("""7f6c52f0-0f2b-11ef-8000-0242ac120002,alice,7,"a, ""quoted""
note"""") == Right(Seq("alice", 7, "a, \"quoted\"\nnote")))
    assert(csv(",bob,,") == Right(Seq("bob", null, null)))
    assert(read(Framing.Csv, "user STRING, amount INT, note STRING", select = Seq("amount"))(",carol,3,x") ==
      Right(Seq(3)))
  }

  test("CSV: a value not of its type, or a record of another width than the schema's, is malformed") {
    val csv = read(Framing.Csv, "user STRING, amount INT")
    assert(csv(",alice,seven").isLeft)
    // A parser reads one journal's records, all as wide as the first (the framing sees to it).
    for (select <- Seq(Nil, Seq("user")); record <- Seq(",alice", ",alice,7,extra", ",\"a,b\""))
      assert(read(Framing.Csv, "user STRING, amount INT", select = select)(record).isLeft, s"$record $select")
    assert(read(Framing.Csv, "user STRING, amount INT", select = Seq("user"))(",\"a,\"\"b\",7") == Right(Seq("a,\"b")))
    val permissiveWidth = read(Framing.Csv, "user STRING, amount INT, _corrupt_record STRING")
    assert(permissiveWidth(",alice") == Right(Seq("alice", null, ",alice")))
    assert(csv(",alice,seven").left.exists(_.contains("seven")), "the reason is the parser's")
    val permissive = read(Framing.Csv, "user STRING, amount INT, _corrupt_record STRING")
    assert(permissive(",alice,seven") == Right(Seq("alice", null, ",alice,seven")))
  }

  test("protobuf journals need a descriptor") {
    val typed = TypedSchema(StructType.fromDDL("a STRING"), includeLabels = false, TypedSchema.DefaultCorruptColumn)
    assert(TypedRead(typed, typed.fields, Map.empty, "UTC").parser(Framing.ProtobufFixed).isLeft)
  }
}
