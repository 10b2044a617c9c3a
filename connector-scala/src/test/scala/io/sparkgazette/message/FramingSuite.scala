package io.sparkgazette.message

import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8

import org.scalacheck.{Gen, Shrink}
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

/** Each framing frames and unpacks its messages bit for bit, and reports every malformed case
  * with the offset where it begins and a reason.
  */
class FramingSuite extends AnyFunSuite with ScalaCheckPropertyChecks {
  private val Json = new JsonFraming(Framing.DefaultUuidPointer)
  private val Fixed = new FixedFraming(Framing.DefaultUuidField)
  private val producer = ProducerId(0x0123456789abL)
  private def uuid(clock: Long, flags: Int = Flags.ContinueTxn) = Uuid.build(producer, clock << 4, flags)

  /** Reads `bytes` as a journal starting at offset 100, delivered in chunks of `chunk` bytes. */
  private def read(framing: Framing, bytes: Array[Byte], chunk: Int = Int.MaxValue) = {
    val chunks = bytes.grouped(math.max(1, math.min(chunk, bytes.length max 1))).zipWithIndex.map { case (c, i) =>
      JournalBytes(100L + i.toLong * math.min(chunk, bytes.length), ByteBuffer.wrap(c))
    }
    new MessageIterator("j", framing, chunks).toList
  }

  private def framed(framing: Framing, payloads: Seq[(String, java.util.UUID)]): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    payloads.foreach { case (p, u) => framing.frame(p.getBytes(UTF_8), u, out) }
    out.toByteArray
  }

  private def text(e: Envelope[RawMessage]) = new String(e.message.bytes, UTF_8)

  test("a message spanning many chunks is returned once its last bytes come, before more are asked for") {
    // A live journal's reader blocks when it asks for bytes not yet written: a message whose last
    // bytes it has must come out without asking.
    val csv = Framing.forContentType(Framing.Csv).toOption.get
    for (framing <- Seq(Json, Fixed, csv)) {
      val payload =
        if (framing eq Fixed) "p" * 50000 else if (framing eq Json) s"""{"p":"${"p" * 50000}"}""" else "p" * 50000
      val bytes = framed(framing, Seq(payload -> uuid(1), payload -> uuid(2)))
      val first = bytes.length / 2
      val live = new Iterator[JournalBytes] {
        private var at = 0
        private val it = bytes.take(first).grouped(1000)
        override def hasNext: Boolean = if (it.hasNext) true else fail(s"$framing asked past the bytes written")
        override def next(): JournalBytes = {
          val c = it.next(); val j = JournalBytes(100L + at, ByteBuffer.wrap(c)); at += c.length; j
        }
      }
      val m = new MessageIterator("j", framing, live)
      assert(m.hasNext, framing)
      assert(m.next().toOption.get.message.uuid == uuid(1), framing)
    }
  }

  test("ndjson: the UUID is set at the pointer, creating or joining its parents, and read back") {
    val bytes = framed(
      Json,
      Seq(
        """{"a":1}""" -> uuid(1),
        """{"_meta":{"op":"c"},"b":[1,2]}""" -> uuid(2),
        "{\n \"pretty\": true\n}" -> uuid(3, Flags.AckTxn),
        "{}" -> uuid(4, Flags.OutsideTxn))
    )
    val lines = new String(bytes, UTF_8).split("\n", -1).toList
    assert(lines.head == s"""{"_meta":{"uuid":"${uuid(1)}"},"a":1}""")
    assert(lines(1) == s"""{"_meta":{"uuid":"${uuid(2)}","op":"c"},"b":[1,2]}""")
    assert(lines(3) == s"""{"_meta":{"uuid":"${uuid(4, Flags.OutsideTxn)}"}}""")
    val msgs = read(Json, bytes).map(_.toOption.get)
    assert(msgs.map(_.message.uuid) == Seq(uuid(1), uuid(2), uuid(3, Flags.AckTxn), uuid(4, Flags.OutsideTxn)))
    assert(msgs.map(_.clock) == Seq(1L << 4, 2L << 4, 3L << 4, 4L << 4))
    assert(msgs.map(_.flags) == Seq(Flags.ContinueTxn, Flags.ContinueTxn, Flags.AckTxn, Flags.OutsideTxn))
    assert(msgs.head.begin == 100 && msgs.last.end == 100 + bytes.length)
    msgs.zip(msgs.tail).foreach { case (a, b) => assert(a.end == b.begin) }
    assert(text(msgs.head) == lines.head)
  }

  test("ndjson: another pointer, and messages without a UUID are outside any transaction") {
    val byKey = new JsonFraming("/UUID")
    val bytes = framed(byKey, Seq("""{"Word":"w"}""" -> uuid(7)))
    assert(new String(bytes, UTF_8) == s"""{"UUID":"${uuid(7)}","Word":"w"}""" + "\n")
    val plain =
      "{\"x\":1}\n{\"_meta\":{\"uuid\":\"\"}}\n[1,2]\n\"s\"\n{\"_meta\":{\"uuid\":\"00000000-0000-0000-0000-000000000000\"}}\n"
    val msgs = read(Json, plain.getBytes(UTF_8)).map(_.toOption.get)
    assert(msgs.size == 5 && msgs.forall(m => m.clock == 0 && m.flags == 0 && m.message.uuid == Uuid.Zero))
  }

  test("ndjson: framing refuses a payload that is not an object or is invalid") {
    def refuse(p: String) = intercept[MessageFormatException](framed(Json, Seq(p -> uuid(1)))).getMessage
    assert(refuse("[1]").contains("not a JSON object"))
    assert(refuse("""{"a":""").contains("invalid JSON"))
    assert(refuse("""{"_meta":5}""").contains("/_meta is not an object"))
  }

  test("ndjson: a value already at the pointer, whatever it is, is replaced by the UUID; the rest is kept byte for " +
    "byte") {
    // A copied document arrives with its input's UUID, as Gazette's Publisher overwrites a message's.
    val u = uuid(9)
    val q = JsonPointerScanner.quote(u.toString)
    val cases = Seq(
      Json -> s"""{"_meta":{"uuid":"${uuid(1)}"},"a":1}""" -> s"""{"_meta":{"uuid":$q},"a":1}""",
      Json -> """{"a":[1],"_meta":{"op":"c","uuid":null,"z":{}}}""" ->
        s"""{"a":[1],"_meta":{"op":"c","uuid":$q,"z":{}}}""",
      Json -> """{"_meta":{"uuid":-12.5e3}}""" -> s"""{"_meta":{"uuid":$q}}""",
      Json -> """{"_meta":{"uuid":true,"n":0}}""" -> s"""{"_meta":{"uuid":$q,"n":0}}""",
      Json -> """{"_meta":{"uuid":{"x":[1,{"y":"}]"}]},"n":0}}""" -> s"""{"_meta":{"uuid":$q,"n":0}}""",
      Json -> """{"_meta":{"uuid":[{"uuid":1}]}}""" -> s"""{"_meta":{"uuid":$q}}""",
      Json -> """{"_meta":{"uuid":""}}""" -> s"""{"_meta":{"uuid":$q}}""",
      Json -> "{\"_meta\":{\"uuid\":\"not \\\"a\\\" uuid\\u0021\\\\\"}}" -> s"""{"_meta":{"uuid":$q}}""",
      // Keys written with escapes are the same keys to any JSON reader.
      Json -> "{\"_m\\u0065ta\":{\"u\\u0075id\":\"x\",\"v\":\"\\u0075\"}}" ->
        ("{\"_m\\u0065ta\":{\"u\\u0075id\":" + q + ",\"v\":\"\\u0075\"}}"),
      Json -> "{ \"_meta\" :\t{ \"uuid\"  :  7 ,\"op\":\"c\" } , \"b\" : 2 }" ->
        ("{ \"_meta\" :\t{ \"uuid\"  :  " + q + " ,\"op\":\"c\" } , \"b\" : 2 }"),
      // A pretty document is written on one line, its line breaks made spaces, as when inserting.
      Json -> "{\n  \"_meta\": {\n    \"uuid\": \"x\"\n  }\n}" -> s"""{   "_meta": {     "uuid": $q   } }""",
      new JsonFraming("/UUID") -> """{"Word":"w","UUID":"x"}""" -> s"""{"Word":"w","UUID":$q}""",
      new JsonFraming("/m/n/uuid") -> """{"m":{"a":{"uuid":1},"n":{"uuid":{}},"uuid":2}}""" ->
        s"""{"m":{"a":{"uuid":1},"n":{"uuid":$q},"uuid":2}}"""
    )
    for (((framing, payload), expected) <- cases) {
      val bytes = framed(framing, Seq(payload -> u))
      assert(new String(bytes, UTF_8) == expected + "\n", payload)
      val back = read(framing, bytes).map(_.toOption.get)
      assert(back.map(_.message.uuid) == Seq(u), payload)
      assert(back.map(_.clock) == Seq(Uuid.clock(u)) && back.map(_.flags) == Seq(Flags.ContinueTxn), payload)
    }
  }

  test("ndjson: any value at the pointer, among any members, is replaced by the UUID framed, which reads back") {
    val texts = Gen.listOf(Gen.oneOf(Gen.alphaNumChar, Gen.oneOf('"', '\\', '{', '}', ',', ' ', 'é'))).map(_.mkString)
    val values: Gen[String] = Gen.oneOf(
      texts.map(JsonPointerScanner.quote),
      Gen.const("null"),
      Gen.const("false"),
      Gen.choose(-1e9, 1e9).map(_.toString),
      texts.map(t => s"""{"uuid":${JsonPointerScanner.quote(t)},"k":[1,"]"]}"""),
      Gen.const("[]")
    )
    val docs = for {
      others <- Gen.listOf(texts); value <- values; at <- Gen.choose(0, 8); space <- Gen.oneOf("", " ", "\t ")
      clock <- Gen.choose(1L, 1L << 40)
    } yield {
      val members = others.zipWithIndex.map { case (t, i) => s""""k$i":$space${JsonPointerScanner.quote(t)}""" }
      def doc(v: String) =
        members.patch(math.min(at, members.size), Seq(s""""_meta":$space{"uuid":$space$v$space}"""), 0)
          .mkString("{", ",", "}")
      val u = uuid(clock)
      (doc(value), u, doc(JsonPointerScanner.quote(u.toString)))
    }
    // Shrunk, a failing document loses the member the test is about.
    implicit val whole: Shrink[(String, java.util.UUID, String)] = Shrink.shrinkAny
    forAll(docs) { case (doc, u, expected) =>
      val bytes = framed(Json, Seq(doc -> u))
      assert(new String(bytes, UTF_8) == expected + "\n")
      assert(read(Json, bytes).map(_.toOption.get.message.uuid) == Seq(u))
    }
  }

  test("ndjson: framing refuses a payload whose UUID's path has a duplicate key, as Go would read the last one") {
    def refuse(p: String) = intercept[MessageFormatException](framed(Json, Seq(p -> uuid(1)))).getMessage
    assert(refuse("""{"_meta":{"a":1},"x":2,"_meta":{"b":3}}""").contains("duplicate key /_meta"))
    assert(refuse("""{"_meta":{},"_meta":{}}""").startsWith("cannot set the UUID at /_meta/uuid: duplicate key /_meta"))
    assert(intercept[MessageFormatException](framed(new JsonFraming("/m/n/uuid"),
          Seq("""{"m":{"n":{},"n":{}}}""" -> uuid(1))))
        .getMessage.contains("duplicate key /m/n"))
    // Nor is a repeated key at the pointer replaced: readers would take the last of its values.
    assert(refuse("""{"_meta":{"uuid":"a","op":"c","uuid":"b"}}""").contains("duplicate key /_meta/uuid"))
    assert(refuse("{\"_meta\":{\"uuid\":1,\"u\\u0075id\":2}}").contains("duplicate key /_meta/uuid"))
    // Duplicates off the path are the document's own business.
    assert(new String(framed(Json, Seq("""{"a":1,"a":2,"_meta":{}}""" -> uuid(1))), UTF_8).contains(
        """"_meta":{"uuid""""))
  }

  test("ndjson: malformed lines, bad UUIDs and a truncated last line are reported at their offsets") {
    val good = s"""{"_meta":{"uuid":"${uuid(1)}"}}"""
    val input =
      Seq(good, """{"a":tru}""", good, """{"_meta":{"uuid":"not-a-uuid"}}""", "", good, """{"open":1""").mkString("\n")
    val out = read(Json, input.getBytes(UTF_8))
    val malformed = out.collect { case Left(m) => m }
    assert(out.count(_.isRight) == 3)
    assert(malformed.map(_.reason.takeWhile(_ != ':')) == Seq("invalid JSON",
      "'not-a-uuid' at /_meta/uuid is not a UUID", "invalid JSON", "truncated message"))
    val starts = input.split("\n", -1).scanLeft(100L)((o, l) => o + l.length + 1)
    assert(malformed.map(_.begin) == Seq(starts(1), starts(3), starts(4), starts(6)))
    assert(malformed.head.describe.contains(s"journal j at offset ${starts(1)}"))
  }

  test("csv: the UUID is the first column; quoted fields, blank lines and CRLF follow RFC 4180") {
    val bytes =
      framed(CsvFraming, Seq("a,b" -> uuid(1), "\"x,y\",\"say \"\"hi\"\"\nthere\"" -> uuid(2), "c,d\r\n" -> uuid(3)))
    assert(new String(bytes, UTF_8).startsWith(s"${uuid(1)},a,b\n${uuid(2)},"))
    val withBlank = bytes ++ "\r\n\n".getBytes(UTF_8) ++ framed(CsvFraming, Seq("e,f" -> uuid(4))) ++
      "\n".getBytes(UTF_8)
    val msgs = read(CsvFraming, withBlank).map(_.toOption.get)
    assert(msgs.map(_.message.uuid) == Seq(uuid(1), uuid(2), uuid(3), uuid(4)))
    assert(CsvFraming.fields(msgs(1).message.bytes) == Right(IndexedSeq(uuid(2).toString, "x,y", "say \"hi\"\nthere")))
    assert(text(msgs(2)) == s"${uuid(3)},c,d")
    // Blank lines belong to the record that follows them, as Go's reader counts offsets.
    assert(msgs(3).begin == msgs(2).end && text(msgs(3)) == s"${uuid(4)},e,f")
    val ack = new ByteArrayOutputStream()
    CsvFraming.frameAck(uuid(5, Flags.AckTxn), "a,b".getBytes(UTF_8), ack)
    assert(ack.toString(UTF_8) == s"${uuid(5, Flags.AckTxn)},,\n")
  }

  test("csv: wrong field counts, stray quotes, bad UUIDs and truncation are malformed; empty UUID is outside") {
    val u = uuid(1).toString
    val input = s"""$u,a,b\n$u,a\n$u,a"b,c\n$u,"a"b,c\nnope,a,b\n,a,b\n$u,"open"""
    val out = read(CsvFraming, input.getBytes(UTF_8))
    val reasons = out.collect { case Left(m) => m.reason }
    assert(reasons.size == 5, out)
    assert(reasons(0) == "record has 2 fields, expected 3")
    assert(reasons(1).startsWith("bare \" in non-quoted field"))
    assert(reasons(2).startsWith("extraneous or missing \" in quoted field"))
    assert(reasons(3) == "first column 'nope' is not a UUID")
    assert(reasons(4).startsWith("unterminated quoted field"))
    assert(out.collect { case Right(e) => e.clock } == Seq(Uuid.clock(uuid(1)), 0L))
  }

  test("protobuf-fixed: header, payload and the 16 UUID bytes in the configured field") {
    val payload = Array[Byte](0x08, 0x96.toByte, 0x01, 0x12, 0x02, 'h', 'i') // field 1 varint, field 2 "hi"
    val f3 = new FixedFraming(3)
    val out = new ByteArrayOutputStream()
    f3.frame(payload, uuid(9), out)
    f3.frameAck(uuid(10, Flags.AckTxn), payload, out)
    val bytes = out.toByteArray
    assert(bytes.take(4).sameElements(FixedFraming.MagicWord))
    assert(bytes(4) == payload.length + 18 && bytes(5) == 0 && bytes(6) == 0 && bytes(7) == 0)
    val msgs = read(f3, bytes).map(_.toOption.get)
    assert(msgs.map(_.message.uuid) == Seq(uuid(9), uuid(10, Flags.AckTxn)))
    assert(msgs.head.message.bytes.take(payload.length).sameElements(payload))
    assert(intercept[MessageFormatException](Fixed.frame(payload, uuid(1), new ByteArrayOutputStream())).getMessage
        .contains("wire type 0"))
    val noUuid = new ByteArrayOutputStream()
    noUuid.write(FixedFraming.MagicWord); noUuid.write(Array[Byte](2, 0, 0, 0)); noUuid.write(Array[Byte](0x10, 0x01))
    assert(read(Fixed, noUuid.toByteArray :+ '\n'.toByte).map(_.toOption.get.clock) == Seq(0L))
  }

  test("protobuf-fixed: a payload that has the UUID field loses every occurrence of it; the new UUID is appended") {
    def bytesField(number: Int, value: Array[Byte]) = {
      val key = new ByteArrayOutputStream()
      ProtoWire.writeVarint(key, (number.toLong << 3) | 2)
      key.toByteArray ++ (value.length.toByte +: value)
    }
    val u = uuid(9)
    val other = bytesField(2, "hi".getBytes(UTF_8))
    val varint = Array[Byte](0x20, 0x05) // field 4
    // Field 3 as a group: a field 1 inside it is the group's, not the message's UUID.
    val group = (0x1b.toByte +: bytesField(1, "in a group".getBytes(UTF_8))) :+ 0x1c.toByte
    for (framing <- Seq(Fixed, new FixedFraming(300))) {
      val number = framing.uuidField
      val payload = bytesField(number, Uuid.toBytes(uuid(1))) ++ other ++ bytesField(number, Array.emptyByteArray) ++
        group ++ varint ++ bytesField(number, Uuid.toBytes(uuid(2)))
      val kept = other ++ group ++ varint
      val out = new ByteArrayOutputStream()
      framing.frame(payload, u, out)
      val back = read(framing, out.toByteArray).map(_.toOption.get)
      assert(back.map(_.message.uuid) == Seq(u), framing)
      assert(back.head.message.bytes.toSeq == (kept ++ bytesField(number, Uuid.toBytes(u))).toSeq, framing)
      // An empty UUID field alone is replaced too.
      val empty = new ByteArrayOutputStream()
      framing.frame(other ++ bytesField(number, Array.emptyByteArray), u, empty)
      assert(read(framing, empty.toByteArray).map(_.toOption.get.message.bytes.toSeq) ==
          Seq((other ++ bytesField(number, Uuid.toBytes(u))).toSeq), framing)
    }
  }

  test("protobuf-fixed: desync skips to the next magic word; bad UUID lengths and truncation are malformed") {
    val good = new ByteArrayOutputStream()
    Fixed.frame(Array.emptyByteArray, uuid(1), good)
    val g = good.toByteArray
    val shortUuid = FixedFraming.MagicWord ++ Array[Byte](4, 0, 0, 0, 0x0a, 2, 1, 2)
    val input = g ++ "garbage".getBytes(UTF_8) ++ g ++ shortUuid ++ g.take(10)
    val out = read(Fixed, input)
    assert(out.collect { case Right(e) => e.begin } == Seq(100L, 100L + g.length + 7))
    val bad = out.collect { case Left(m) => m }
    assert(bad.map(_.reason.takeWhile(_ != ':')) == Seq("desynchronized", "uuid field 1 has 2 bytes, expected 16",
      "truncated message"))
    assert(bad.head.begin == 100 + g.length && bad.head.end == 100 + g.length + 7)
  }

  test("every framing splits identically whatever the chunk boundaries") {
    val json = framed(Json, (1 to 20).map(i => s"""{"i":$i,"s":"${"x" * i}"}""" -> uuid(i)))
    val csv = framed(CsvFraming, (1 to 20).map(i => s"""$i,"q,${"\n" * (i % 3)}"""" -> uuid(i)))
    val fixedOut = new ByteArrayOutputStream()
    (1 to 20).foreach(i => Fixed.frame(Array[Byte](0x1a, i.toByte) ++ Array.fill(i)(0x55.toByte), uuid(i), fixedOut))
    for ((framing, bytes) <- Seq(Json -> json, CsvFraming -> csv, Fixed -> fixedOut.toByteArray)) {
      val whole = read(framing, bytes).map(_.map(e => (e.begin, e.end, e.message.uuid, e.message.bytes.toSeq)))
      assert(whole.size == 20 && whole.forall(_.isRight), s"$framing: $whole")
      forAll(Gen.choose(1, 64)) { chunk =>
        assert(read(framing, bytes, chunk).map(_.map(e => (e.begin, e.end, e.message.uuid, e.message.bytes.toSeq))) ==
          whole)
      }
    }
  }

  test("ndjson: bytes known written are framed as a read that follows appends frames them, in any chunks and jumps") {
    // Taking more bytes before looking must change only when a line is looked at, never what is found.
    val seed = System.nanoTime()
    val rnd = new scala.util.Random(seed)
    val typed = new JsonFraming(Framing.DefaultUuidPointer, withMembers = true)
    for (round <- 0 until 300) {
      val lines = Seq.fill(1 + rnd.nextInt(30)) {
        val pad = "é" * rnd.nextInt(3) + "x" * (if (rnd.nextInt(4) == 0) rnd.nextInt(5000) else rnd.nextInt(40))
        rnd.nextInt(10) match {
          case 0 => s"""{"a":"$pad"""" // malformed: the object never closes
          case 1 => s"""[1, "$pad"]"""
          case _ => s"""{"_meta":{"uuid":"${uuid(1 + rnd.nextInt(1000))}"},"a":"$pad","n":${rnd.nextInt()}}"""
        }
      }
      val text = lines.mkString("\n") + (if (rnd.nextBoolean()) "\n" else "")
      val bytes = text.getBytes(UTF_8)
      val chunk = 1 + rnd.nextInt(if (rnd.nextBoolean()) 64 else 8192)
      val holdTail = rnd.nextBoolean()
      val maxBytes = if (rnd.nextInt(4) == 0) 50 + rnd.nextInt(3000) else Int.MaxValue
      // Sometimes the journal jumps forward before a chunk (a removed fragment).
      val jumps = Seq.fill(bytes.length / chunk + 1)(if (rnd.nextInt(6) == 0) 1 + rnd.nextInt(100) else 0)
        .scanLeft(0L)(_ + _)
      // Written up to the end, or to some offset within.
      val writtenUntil = if (rnd.nextBoolean()) Long.MaxValue else rnd.nextInt(bytes.length + 1).toLong
      def run(written: Boolean) = {
        val chunks = bytes.grouped(chunk).zipWithIndex.map { case (c, i) =>
          JournalBytes(i.toLong * chunk + jumps(i), ByteBuffer.wrap(c))
        }
        val it = new MessageIterator("j", typed, chunks, holdTail = holdTail,
          maxMessageBytes = maxBytes, writtenUntil = if (written) writtenUntil else Long.MinValue)
        val out = it.toList.map(_.map(e =>
            (e.begin, e.end, e.message.uuid, e.message.bytes.toSeq, Option(e.message.members).map(_.toSeq))))
        (out, it.holdsPartial, it.offset)
      }
      withClue(s"seed $seed, round $round, chunks of $chunk, holdTail $holdTail, jumps $jumps, written until " +
        s"$writtenUntil, maxMessageBytes $maxBytes: ") {
        assert(run(written = true) == run(written = false))
      }
    }
  }

  test("ndjson: a short malformed line after one longer than the largest message allowed keeps its own reason") {
    val long = s"""{"p":"${"x" * 300}"}""" + "\n"
    val rest = "{\"a\":1\n" + s"""{"b":"${"y" * 120}"}""" + "\n"
    def run(writtenUntil: Long) = {
      val chunks = Iterator(long, rest, "{}\n").scanLeft((0L, "")) { case ((o, p), s) => (o + p.length, s) }.drop(1)
        .map { case (o, s) => JournalBytes(o, ByteBuffer.wrap(s.getBytes(UTF_8))) }
      new MessageIterator("j", Json, chunks, maxMessageBytes = 100, writtenUntil = writtenUntil).toList
        .collect { case Left(m) => s"${m.begin}-${m.end}: ${m.reason}" }
    }
    assert(run(Long.MaxValue) == run(Long.MinValue))
    assert(run(Long.MaxValue).exists(_.startsWith("309-316: invalid JSON")), run(Long.MaxValue))
  }

  test("ndjson without validation: well-formed lines give the same messages and UUIDs, in any chunks") {
    val texts =
      Gen.listOf(Gen.oneOf(Gen.alphaNumChar, Gen.oneOf(',', '"', '\n', ' ', '\\', '{', '}', 'é'))).map(_.mkString)
    val docs = for (values <- Gen.listOfN(2, texts); clock <- Gen.choose(0L, 1L << 40); at <- Gen.choose(0, 2))
      yield {
        val members = values.zipWithIndex.map { case (v, i) =>
          s"${JsonPointerScanner.quote(s"k$i")}:${JsonPointerScanner.quote(v)}"
        }
        val withUuid = if (clock == 0) members else members.patch(at, Seq(s""""_meta":{"uuid":"${uuid(clock)}"}"""), 0)
        withUuid.mkString("{", ",", "}")
      }
    forAll(Gen.listOf(docs), Gen.choose(1, 64)) { (lines, chunk) =>
      val bytes = lines.map(_ + "\n").mkString.getBytes(UTF_8)
      val chunks = () =>
        bytes.grouped(chunk).zipWithIndex.map { case (c, i) => JournalBytes(100L + i * chunk, ByteBuffer.wrap(c)) }
      def key(e: Either[MalformedMessage, Envelope[RawMessage]]) =
        e.map(env => (env.begin, env.end, env.producer, env.clock, env.flags))
      val checked = new MessageIterator("j", Json, chunks()).map(key).toList
      val trusted = new MessageIterator("j", Json, chunks(), payloads = false, validate = false).map(key).toList
      assert(checked.forall(_.isRight))
      assert(trusted == checked)
    }
  }

  test("not validating, a line that is not JSON is a message without a UUID, left to its parser to judge") {
    val bytes = "{\"a\":\n{\"a\":1}\n".getBytes(UTF_8)
    def read(validate: Boolean) = new MessageIterator("j", Json, Iterator(JournalBytes(0L, ByteBuffer.wrap(bytes))),
      validate = validate).toList
    assert(read(validate = true).head.isLeft)
    val lines = read(validate = false)
    assert(lines.map(_.map(e => (e.begin, e.end, e.clock, new String(e.message.bytes, UTF_8)))) ==
      List(Right((0L, 6L, 0L, "{\"a\":")), Right((6L, 14L, 0L, "{\"a\":1}"))))
  }

  test("round trips: any payload framed with any UUID reads back with that UUID and its content") {
    val texts =
      Gen.listOf(Gen.oneOf(Gen.alphaNumChar, Gen.oneOf(',', '"', '\n', ' ', '\\', '/', 'é', '\u0001'))).map(_.mkString)
    val uuids = for (p <- Gen.choose(0L, 0xffffffffffffL); c <- Gen.choose(1L, 1L << 58); f <- Gen.oneOf(0, 1, 2))
      yield Uuid.build(ProducerId(p), c, f)
    def jsonString(s: String) = JsonPointerScanner.quote(s)
    forAll(Gen.listOfN(3, texts), uuids) { (values, u) =>
      val doc =
        values.zipWithIndex.map { case (v, i) => s"${jsonString(s"k$i")}:${jsonString(v)}" }.mkString("{", ",", "}")
      val json = read(Json, framed(Json, Seq(doc -> u))).map(_.toOption.get)
      assert(json.map(_.message.uuid) == Seq(u))
      values.foreach(v => assert(text(json.head).contains(jsonString(v))))

      val record = values.map(v =>
        if (v.exists(",\"\n".contains(_)) || v.isEmpty) "\"" + v.replace("\"", "\"\"") + "\"" else v).mkString(",")
      val csv = read(CsvFraming, framed(CsvFraming, Seq(record -> u))).map(_.toOption.get)
      assert(csv.map(_.message.uuid) == Seq(u))
      assert(CsvFraming.fields(csv.head.message.bytes) == Right(u.toString +: values.toIndexedSeq))

      val proto = values.map(_.getBytes(UTF_8)).foldLeft(Array.emptyByteArray)((acc, v) =>
        acc ++ Array[Byte](0x12, v.length.toByte) ++ v)
      whenever(values.forall(_.getBytes(UTF_8).length < 128)) {
        val out = new ByteArrayOutputStream()
        Fixed.frame(proto, u, out)
        val fixed = read(Fixed, out.toByteArray).map(_.toOption.get)
        assert(fixed.map(_.message.uuid) == Seq(u))
        assert(fixed.head.message.bytes.take(proto.length).sameElements(proto))
      }
    }
  }

  test("an offset jump reports the unfinished message before it and resumes after it") {
    val a = framed(Json, Seq("""{"a":1}""" -> uuid(1)))
    val b = framed(Json, Seq("""{"b":2}""" -> uuid(2)))
    val chunks = Iterator(JournalBytes(0, ByteBuffer.wrap(a ++ b.take(3))), JournalBytes(1000, ByteBuffer.wrap(b)))
    val out = new MessageIterator("j", Json, chunks).toList
    assert(out.map(_.fold(m => ("bad", m.begin, m.end), e => ("ok", e.begin, e.end))) ==
      Seq(("ok", 0L, a.length.toLong), ("bad", a.length.toLong, a.length + 3L), ("ok", 1000L, 1000L + b.length)))
  }

  test("with holdTail, a message the chunks end inside is held, not reported, in every framing") {
    for (framing <- Seq[Framing](Json, CsvFraming, Fixed)) {
      // A protobuf payload of field 2 holding the letter; a JSON object; a CSV field.
      def payload(p: String) = if (framing == Json) s"""{"$p":1}""" else if (framing == Fixed) s"\u0012\u0001$p" else p
      val whole = framed(framing, Seq("a" -> uuid(1), "b" -> uuid(2)).map { case (p, u) => payload(p) -> u })
      for (cut <- 1 until whole.length) {
        val it = new MessageIterator(
          "j", framing, Iterator(JournalBytes(0, ByteBuffer.wrap(whole.take(cut)))), holdTail = true)
        val out = it.toList
        assert(out.forall(_.isRight), s"$framing cut at $cut: $out")
        assert(out.map(_.toOption.get.end).lastOption.getOrElse(0L) + (if (it.holdsPartial) 1 else 0) <= cut)
        assert(it.holdsPartial == !out.map(_.toOption.get.end).contains(cut.toLong))
      }
    }
  }

  test("a message spanning many chunks, or one that never ends, is parsed in linear time") {
    final class Counting(inner: Framing) extends Framing {
      var scanned = 0L
      override def contentType: String = inner.contentType
      override private[message] def newUnpacker(): Unpacker = new Unpacker {
        private val u = inner.newUnpacker()
        override def unpack(b: Array[Byte], from: Int, until: Int, atEnd: Boolean, moreReady: Boolean): Unpacked = {
          scanned += until - from; u.unpack(b, from, until, atEnd, moreReady)
        }
      }
      override def frame(payload: Array[Byte], uuid: java.util.UUID, out: ByteArrayOutputStream): Unit =
        inner.frame(payload, uuid, out)
      override def frameAck(uuid: java.util.UUID, like: Array[Byte], out: ByteArrayOutputStream): Unit =
        inner.frameAck(uuid, like, out)
    }
    val open = ("\"" + "x" * (4 << 20)).getBytes(UTF_8) // an unterminated quoted CSV field, 4 MiB long
    for ((framing, bytes) <- Seq(new Counting(CsvFraming) -> open,
        new Counting(Json) -> ("{\"a\":\"" + "y" * (4 << 20) + "\"}\n").getBytes(UTF_8))) {
      val chunks = bytes.grouped(16 << 10).zipWithIndex.map { case (c, i) =>
        JournalBytes(i.toLong * (16 << 10), ByteBuffer.wrap(c))
      }
      new MessageIterator("j", framing, chunks, holdTail = true).toList
      assert(framing.scanned < 4L * bytes.length,
        s"${framing.contentType}: ${framing.scanned} bytes scanned for ${bytes.length}")
    }
  }

  test("bytes that hold no message within the largest message allowed are malformed, and reading resumes after them") {
    val good = framed(CsvFraming, Seq("a" -> uuid(1), "b" -> uuid(2)))
    val open = ("\"" + "x" * 5000 + ",y\n").getBytes(UTF_8) // an unterminated quote, then a line ending
    val bytes = open ++ good
    val chunks = bytes.grouped(512).zipWithIndex.map { case (c, i) => JournalBytes(i * 512L, ByteBuffer.wrap(c)) }
    val out = new MessageIterator("j", CsvFraming, chunks, holdTail = true, maxMessageBytes = 1024).toList
    assert(out.head.left.toOption.exists(m => m.begin == 0 && m.reason.contains("no message ends within 1024 bytes")),
      out.head)
    assert(
      out.collect { case Right(e) => (e.begin, e.end) } ==
        Seq(
          (open.length.toLong, open.length + good.length / 2L), (open.length + good.length / 2L, bytes.length.toLong)),
      out.map(_.fold(m => s"${m.begin}-${m.end} ${m.reason.take(80)}", e => s"${e.begin}-${e.end}"))
    )
  }

  test("unknown content types are refused with the value named") {
    assert(Framing.forContentType("application/json") == Left(
      "unrecognized content-type (application/json); expected one of application/x-ndjson, text/csv, application/x-protobuf-fixed"))
    assert(Framing.forContentType(null).isLeft)
  }

  // Every newline ends an ndjson record, also after a line cut for being longer than the limit:
  // pieces of a split range begin at line starts, and must agree with a reader of the whole range.
  private def records(text: String, chunkSizes: Seq[Int], maxBytes: Int): Seq[(Long, Long, Boolean)] = {
    val bytes = text.getBytes(java.nio.charset.StandardCharsets.UTF_8)
    val bounds = chunkSizes.scanLeft(0)(_ + _).filter(_ < bytes.length) :+ bytes.length
    val chunks = bounds.zip(bounds.drop(1)).map { case (a, b) =>
      JournalBytes(a, java.nio.ByteBuffer.wrap(bytes, a, b - a).slice())
    }
    new MessageIterator(
      "j", new JsonFraming("/_meta/uuid"), chunks.iterator, holdTail = true, maxMessageBytes = maxBytes)
      .map { case Left(m) => (m.begin, m.end, false); case Right(e) => (e.begin, e.end, true) }.toSeq
  }

  test("ndjson: after a line longer than the limit is cut, every later newline still ends a record") {
    val long = "{\"p\":\"" + "x" * 53 + "\"}\n" // 62 bytes
    val a = "{\"p\":\"" + "a" * 12 + "\"}\n" // 21 bytes
    assert(records(long + a + a, Seq(40, 1000), 40).filter(_._3).map(_._1) == Seq(62L, 83L))
    assert(records(long + a + a + a, Seq.fill(20)(10), 40).filter(_._3).map(_._1) == Seq(62L, 83L, 104L))
    // A cut line at the end of what was read never yields a record past it.
    assert(records(long, Seq(40, 22), 40).forall(_._2 <= 62))
  }
}
