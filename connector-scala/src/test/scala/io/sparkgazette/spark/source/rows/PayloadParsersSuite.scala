package io.sparkgazette.spark
package source
package rows

import java.nio.charset.StandardCharsets.UTF_8

import io.sparkgazette.message.{Framing, JsonSyntax, RawMessage, Uuid}
import io.sparkgazette.spark.testing.ThisSpark
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

  /** As [[read]], parsing ndjson messages as a typed read's framing hands them over: with where
    * their members lie.
    */
  private def readMessages(schema: String, select: Seq[String]): String => Either[String, Seq[Any]] = {
    val fields = StructType.fromDDL(schema)
    val typed = TypedSchema(fields, includeLabels = false, TypedSchema.DefaultCorruptColumn)
    val required = StructType(fields.filter(f => select.contains(f.name)))
    val parse = TypedRead(typed, required, Map.empty, "UTC").parser(Framing.JsonLines).toOption.get
    payload => parse(message(payload)).map(row => values(row, required))
  }

  private def message(payload: String): RawMessage = {
    val b = payload.getBytes(UTF_8)
    val members = new JsonSyntax.Members
    assert(JsonSyntax.checkLine(b, 0, b.length, members).isRight, payload)
    new RawMessage(b, Uuid.Zero, if (members.objectChecked) members.relativeTo(0) else null)
  }

  private def seed(): Long = sys.env.get("SPARKGAZETTE_SEED").map(_.toLong).getOrElse(System.nanoTime())

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

  test("ndjson: the framing's members of each message: keys, values and ends, also of nested and odd documents") {
    def spans(doc: String): Option[Seq[(String, String)]] = {
      val b = doc.getBytes(UTF_8)
      val m = new JsonSyntax.Members
      assert(JsonSyntax.checkLine(b, 0, b.length, m).isRight)
      (if (!m.objectChecked) None
       else Some {
         val s = m.relativeTo(0)
         val f = JsonSyntax.Members.Fields
         (0 until m.count).map(k => (doc.substring(s(f * k), s(f * k + 1)), doc.substring(s(f * k + 1), s(f * k + 2))))
       })
    }
    assert(spans("""{"a":1,"b" : {"c":[1,{"d":2}]} ,"a":"x,}"}""") ==
      Some(Seq(("\"a\"", ":1"), ("\"b\"", " : {\"c\":[1,{\"d\":2}]} "), ("\"a\"", ":\"x,}\""))))
    assert(spans(" {} ") == Some(Nil))
    assert(spans("""[{"a":1}]""").isEmpty, "an array has no members")
    assert(spans("7").isEmpty)
    val b = """{"a":1}""".getBytes(UTF_8)
    val m = new JsonSyntax.Members
    assert(JsonSyntax.lineEnd((new String(b, UTF_8) + "\n").getBytes(UTF_8), 0, b.length + 1, m) == b.length)
    // Its key and end; a scalar (depth 0), its longest number 1, key 1 and string none, all ASCII.
    assert(m.objectChecked && m.relativeTo(0).toSeq == Seq(1, 4, 6, 0, 1, 1, 0, 0))
    val deep = """{"k":[{"ab":"\u00e9x"}, -12.5e3]}""".getBytes(UTF_8)
    assert(JsonSyntax.checkLine(deep, 0, deep.length, m).isRight)
    assert(m.relativeTo(0).toSeq.drop(3) == Seq(2, 7, 2, 3, 1), "depth 2, number -12.5e3, key ab, string é + x")
  }

  test("ndjson: a parse of the members a query reads makes the same row as a parse of the whole message") {
    val s = seed()
    val random = new scala.util.Random(s)
    def string(): String = random.nextInt(4) match {
      case 0 => "\"\""
      case 1 => "\"plain\""
      case 2 => "\"esc \\\" \\u00e9 \\n,}\""
      case _ => "\"" + ("pad," * random.nextInt(400)) + "\""
    }
    def value(depth: Int): String = random.nextInt(if (depth > 2) 5 else 7) match {
      case 0 => random.nextInt(1000).toString
      case 1 => string()
      case 2 => "null"
      case 3 => "true"
      case 4 => "\"notanumber\""
      case 5 => s"""{"a":${value(depth + 1)},"b":${string()}}"""
      case _ => s"[${value(depth + 1)}, ${value(depth + 1)}]"
    }
    val keys = Seq("user", "User", "amount", "pad", "nested", "us\\u0065r", "\u00e9", "_meta", "other")
    val schema = "user STRING, amount INT, nested STRUCT<a: INT, b: STRING>, pad STRING, `\u00e9` STRING"
    val selections = Seq(Seq("user"), Seq("amount"), Seq("user", "amount"), Seq("nested"), Seq("\u00e9"),
      Seq("pad"), Seq("user", "amount", "nested", "pad", "\u00e9"))
    val parsers =
      selections.map(sel => sel -> (read(Framing.JsonLines, schema, select = sel), readMessages(schema, sel)))
    var selected = 0
    for (_ <- 0 until 400) {
      val members = Seq.fill(random.nextInt(8))(
        "\"" + keys(random.nextInt(keys.size)) + "\"" + (if (random.nextBoolean()) " " else "") + ":" + value(0))
      val doc =
        members.mkString(if (random.nextBoolean()) "{" else " { ", if (random.nextBoolean()) "," else " , ", "}")
      val m = message(doc)
      for ((sel, (whole, members)) <- parsers) {
        assert(members(doc) == whole(doc), s"seed $s, reading $sel of $doc")
        if (JsonPayloads.select(m.bytes, m.members, sel.map(_.getBytes(UTF_8)).toArray) != null) selected += 1
      }
    }
    assert(selected > 100, s"seed $s: only $selected parses read a selection of members")
  }

  test("ndjson: a selection of members is an object of those members only, in their order") {
    val doc = s"""{"user":"a","pad":"${"x" * 200}","amount":1,"user":"b"}"""
    val m = message(doc)
    val names = Array("user".getBytes(UTF_8))
    assert(new String(JsonPayloads.select(m.bytes, m.members, names), UTF_8) == """{"user":"a","user":"b"}""")
    assert(JsonPayloads.select(m.bytes, m.members, Array("pad".getBytes(UTF_8))) == null, "most of the payload")
    assert(new String(JsonPayloads.select(m.bytes, m.members, Array.empty), UTF_8) == "{}")
    assert(readMessages("user STRING, amount INT", Seq("user"))(doc) == Right(Seq("b")), "the last of a repeated key")
  }

  test("ndjson: a message Spark's parser rejects whole is rejected whatever members the query reads") {
    // The framing's check accepts all of these (strict JSON); Jackson, parsing the whole message,
    // rejects them in a member the query does not read: bytes that are not UTF-8, nesting deeper
    // than maxNestingDepth, a number longer than maxNumLen, a key longer than Jackson's limit.
    val pad = "x" * 200
    val badUtf8 = s"""{"user":"a","note":"XX$pad"}""".getBytes(UTF_8)
    badUtf8(21) = 0xff.toByte
    val docs = Seq[(String, (Array[Byte], Map[String, String]))](
      "bad UTF-8" -> (badUtf8, Map.empty),
      "nesting 1001 deep" -> (s"""{"user":"a","note":${"[" * 1001}${"]" * 1001}}""".getBytes(UTF_8), Map.empty),
      "a 1001-digit number" -> (s"""{"user":"a","note":${"1" * 1001}}""".getBytes(UTF_8), Map.empty),
      "maxNestingDepth 3" ->
        (s"""{"user":"a","note":[[[[1]]]],"pad":"$pad"}""".getBytes(UTF_8),
          Map("maxNestingDepth" -> "3"))
    ) ++
      (if (!ThisSpark.jacksonLimitsNames) Nil
       else
         Seq("a 60000-byte key" -> (s"""{"user":"a","${"k" * 60000}":1}""".getBytes(UTF_8), Map.empty[String, String])))
    val fields = StructType.fromDDL("user STRING")
    val typed = TypedSchema(fields, includeLabels = false, TypedSchema.DefaultCorruptColumn)
    val differ = for {
      (what, (b, options)) <- docs
      required <- Seq(fields, new StructType())
      members = new JsonSyntax.Members
      _ = assert(JsonSyntax.checkLine(b, 0, b.length, members).isRight, what)
      whole = TypedRead(typed, required, options, "UTC").parser(Framing.JsonLines).toOption.get.apply(b)
      _ = assert(whole.isLeft, s"$what: the whole message parses")
      selective = TypedRead(typed, required, options, "UTC").parser(Framing.JsonLines).toOption.get
        .apply(new RawMessage(b, Uuid.Zero, members.relativeTo(0)))
      if selective.isLeft != whole.isLeft
    } yield s"$what, reading ${required.fieldNames.mkString("[", ",", "]")}: whole $whole, members $selective"
    assert(differ.isEmpty, differ.mkString("\n", "\n", ""))
  }

  test("CSV: the columns a query reads are the same values as in a parse of every column, whatever follows them") {
    val s = seed()
    val random = new scala.util.Random(s)
    def field(): String = random.nextInt(5) match {
      case 0 => ""
      case 1 => "plain"
      case 2 => "\"a,b\""
      case 3 => "\"two\nlines, \"\"quoted\"\"\""
      case _ => "\"" + ("x," * random.nextInt(50)) + "\""
    }
    val schema = "a STRING, n INT, pad STRING"
    val all = read(Framing.Csv, schema)
    val selections = Seq(Seq("a"), Seq("n"), Seq("a", "n"), Seq("pad"), Seq("n", "pad"))
    val parsers = selections.map(sel => sel -> read(Framing.Csv, schema, select = sel))
    for (_ <- 0 until 500) {
      val record = s",${field()},${random.nextInt(1000)},${field()}"
      val whole = all(record)
      assert(whole.isRight, s"seed $s: $record: $whole")
      for ((sel, parse) <- parsers)
        assert(parse(record) == Right(sel.map(f => whole.toOption.get(Seq("a", "n", "pad").indexOf(f)))),
          s"seed $s: $record, reading $sel")
    }
    val b = "u,\"a,b\",c,d".getBytes(UTF_8)
    assert(Seq(1, 2, 3, 4).map(CsvPayloads.prefix(b, _)) == Seq(1, 7, 9, b.length))
  }

  test("protobuf journals need a descriptor") {
    val typed = TypedSchema(StructType.fromDDL("a STRING"), includeLabels = false, TypedSchema.DefaultCorruptColumn)
    assert(TypedRead(typed, typed.fields, Map.empty, "UTC").parser(Framing.ProtobufFixed).isLeft)
  }
}
