package io.sparkgazette.message

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

class JsonPointerScannerSuite extends AnyFunSuite {
  private def find(pointer: String, doc: String) = {
    val bytes = ("xx" + doc + "yy").getBytes(UTF_8) // the document sits inside a larger buffer
    new JsonPointerScanner(pointer).find(bytes, 2, bytes.length - 2)
  }

  test("finds a nested string past values of every kind, without being fooled by look-alikes") {
    val doc = """{"a":1.5e3,"s":"x\"_meta\"","arr":[{"_meta":{"uuid":"no"}},[],"]"],"t":true,"n":null,""" +
      """ "_meta" : { "other": {"uuid":"nested"}, "uuid" : "9f2b7f2a-1b2c-11ef-8000-0123456789ab" } }"""
    assert(find("/_meta/uuid", doc) == Right(Some("9f2b7f2a-1b2c-11ef-8000-0123456789ab")))
    assert(find("/UUID", """{"UUID":"u-1","Word":"w"}""") == Right(Some("u-1")))
  }

  test("absent members, non-string values and empty documents are None") {
    assert(find("/_meta/uuid", """{"_meta":{}}""") == Right(None))
    assert(find("/_meta/uuid", """{"x":{"uuid":"a"}}""") == Right(None))
    assert(find("/_meta/uuid", """{"_meta":{"uuid":42}}""") == Right(None))
    assert(find("/_meta/uuid", """{"_meta":"flat"}""") == Right(None))
    assert(find("/_meta/uuid", """{}""") == Right(None))
  }

  test("array indices, escaped keys and escaped strings follow RFC 6901 and JSON") {
    assert(find("/list/1", """{"list":["a","b","c"]}""") == Right(Some("b")))
    assert(find("/list/3", """{"list":["a","b","c"]}""") == Right(None))
    assert(find("/a~1b/c~0d", """{"a/b":{"c~d":"yes"}}""") == Right(Some("yes")))
    assert(find("/k", """{"\u006b":"esc\"aped\u0041"}""") == Right(Some("esc\"apedA")))
  }

  test("malformed documents on the pointer's path are reported") {
    assert(find("/_meta/uuid", """{"_meta":{"uuid":"open""").isLeft)
    assert(find("/_meta/uuid", """{"_meta" {"uuid":"x"}}""").isLeft)
    assert(find("/_meta/uuid", """{"a":[1,2""").isLeft)
    assert(find("/_meta/uuid", """""").isLeft)
  }

  test("stringBounds agrees with find: the unescaped string's bounds, Absent, or AskFind") {
    val cases = Seq(
      "/_meta/uuid" -> """{"a":[1,{"b":"}"}],"_meta":{"uuid":"9f2b7f2a-1b2c-11ef-8000-0123456789ab"}}""",
      "/_meta/uuid" -> """{"_meta":{"uuid":""}}""",
      "/_meta/uuid" -> """{"_meta":{"uuid":"esc\"aped"}}""",
      "/_meta/uuid" -> """{"_meta":{"uuid":42}}""",
      "/_meta/uuid" -> """{"_meta":{}}""",
      "/_meta/uuid" -> """{"_meta":{"uuid":"open""",
      "/list/1" -> """{"list":["a","b"]}""",
      "" -> "\"whole\""
    )
    for ((pointer, doc) <- cases) {
      val bytes = ("xx" + doc + "yy").getBytes(UTF_8)
      val scanner = new JsonPointerScanner(pointer)
      val at = scanner.stringBounds(bytes, 2, bytes.length - 2)
      scanner.find(bytes, 2, bytes.length - 2) match {
        case Right(None) => assert(at == JsonPointerScanner.Absent, doc)
        case Right(Some(s)) if !doc.contains("\\") =>
          assert(at >= 0 && new String(bytes, (at >>> 32).toInt, at.toInt - (at >>> 32).toInt, UTF_8) == s, doc)
        case _ => assert(at == JsonPointerScanner.AskFind, doc)
      }
    }
  }

  test("place: the bounds of the value at the pointer, whatever it is, or where its member would be inserted") {
    def place(pointer: String, doc: String) = {
      val bytes = ("xx" + doc + "yy").getBytes(UTF_8)
      new JsonPointerScanner(pointer).place(bytes, 2, bytes.length - 2).map {
        case JsonPointerScanner.Replace(start, end) => new String(bytes, start, end - start, UTF_8)
        case JsonPointerScanner.Insert(depth, at, empty) => (depth, new String(bytes, 2, at - 2, UTF_8), empty)
      }
    }
    assert(place("/_meta/uuid", """{"_meta":{"uuid":"old","x":1}}""") == Right("\"old\""))
    assert(place("/_meta/uuid", """{ "_meta" : { "uuid" : [1, {"a":"]"}] } }""") == Right("""[1, {"a":"]"}]"""))
    assert(place("/_meta/uuid", """{"_meta":{"uuid":-1.5e3}}""") == Right("-1.5e3"))
    assert(place("/_meta/uuid", """{"_meta":{"uuid":null }}""") == Right("null"))
    assert(place("/_meta/uuid", """{"a":1}""") == Right((0, "{", false)))
    assert(place("/_meta/uuid", """{"_meta": { }}""") == Right((1, "{\"_meta\": {", true)))
    assert(place("/_meta/uuid", """{"_meta":{"uuid":1},"_meta":{}}""").left.exists(
        _.startsWith("duplicate key /_meta")))
    assert(place("/_meta/uuid", """{"_meta":{"uuid":1,"uuid":1}}""").left.exists(
        _.startsWith("duplicate key /_meta/uuid")))
    assert(place("/_meta/uuid", """{"_meta":[]}""") == Left("/_meta is not an object"))
    assert(place("", "{}").isLeft)
  }
}
