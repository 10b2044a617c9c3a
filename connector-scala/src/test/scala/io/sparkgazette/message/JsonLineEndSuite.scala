package io.sparkgazette.message

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/** [[JsonSyntax.lineEnd]], the one-pass check of an ndjson line, accepts exactly the lines that
  * searching for the newline and then checking the line accepts, wherever the bytes end.
  */
class JsonLineEndSuite extends AnyFunSuite {
  // What ndjson framing did before the one pass: find the newline, then check the line.
  private def twoPasses(b: Array[Byte], from: Int, until: Int): Int = {
    val i = ByteScan.indexOf(b, from, until, '\n')
    if (i < until && JsonSyntax.check(b, from, i).isEmpty) i else -1
  }

  private val tokens = Seq(
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    " ",
    "\t",
    "\r",
    "\n",
    "\"a\"",
    "\"\\n\"",
    "\"é\"",
    "\"\\u00e9\"",
    "\"\\u12\"",
    "\"\\q\"",
    "\"open",
    "\"\n\"",
    "\"\u0001\"",
    "1",
    "-0.5e3",
    "01",
    "-",
    "1.",
    "true",
    "tru",
    "null",
    "false",
    "x",
    "\"k\":",
    "\"k\":1",
    "{\"k\":[1,2]}"
  )

  private def value(rnd: Random, depth: Int): String = rnd.nextInt(if (depth > 3) 4 else 6) match {
    case 0 => "\"" + Seq("", "a b", "é", "\\\"", "\\\\", "\\u00e9", "\\n", "x" * rnd.nextInt(40))(rnd.nextInt(8)) + "\""
    case 1 => Seq("0", "-1", "3.25", "1e9", "-0.5E-3")(rnd.nextInt(5))
    case 2 => Seq("true", "false", "null")(rnd.nextInt(3))
    case 3 => "\"" + "y" * rnd.nextInt(200) + "\""
    case 4 => (0 until rnd.nextInt(4)).map(_ => ws(rnd) + value(rnd, depth + 1) + ws(rnd)).mkString("[", ",", "]")
    case _ =>
      (0 until rnd.nextInt(4)).map(k => ws(rnd) + s""""k$k"""" + ws(rnd) + ":" + value(rnd, depth + 1)).mkString(
        "{", ",", "}")
  }

  // Whitespace, sometimes with a line break inside it (which ends an ndjson line).
  private def ws(rnd: Random): String = Seq("", "", " ", "\t", "\r", " \r", "\n")(rnd.nextInt(7))

  private def line(rnd: Random): String = rnd.nextInt(3) match {
    case 0 => (0 until rnd.nextInt(12)).map(_ => tokens(rnd.nextInt(tokens.size))).mkString
    case 1 =>
      // A document with one token swapped in, added or dropped.
      val doc = value(rnd, 0)
      val at = rnd.nextInt(doc.length + 1)
      doc.take(at) + (if (rnd.nextBoolean()) tokens(rnd.nextInt(tokens.size)) else "") + doc.drop(at + rnd.nextInt(2))
    case _ => ws(rnd) + value(rnd, 0) + ws(rnd)
  }

  test("lineEnd agrees with a newline search and a check of the line, on random lines cut anywhere") {
    val seed = System.nanoTime()
    val rnd = new Random(seed)
    var accepted = 0
    for (_ <- 0 until 30000) {
      val head = "z" * rnd.nextInt(3)
      val text = head + line(rnd) + "\n" + (if (rnd.nextBoolean()) line(rnd) + "\n" else "")
      val b = text.getBytes(UTF_8)
      val from = head.length
      val until = if (rnd.nextInt(4) == 0) from + rnd.nextInt(b.length - from + 1) else b.length
      val expected = twoPasses(b, from, until)
      withClue(s"seed $seed, line ${text.drop(from).take(until - from).replace("\n", "\\n")}: ") {
        assert(JsonSyntax.lineEnd(b, from, until) == expected)
      }
      if (expected >= 0) accepted += 1
    }
    // Both outcomes must be well represented, or the property says little.
    assert(accepted > 5000 && accepted < 25000, s"seed $seed: $accepted of 30000 lines accepted")
  }

  test("lineEnd finds the newline after a document and its trailing whitespace") {
    val b = "{\"a\":[1,\"x\"]} \r\n{}\n".getBytes(UTF_8)
    assert(JsonSyntax.lineEnd(b, 0, b.length) == 15)
    assert(JsonSyntax.lineEnd(b, 16, b.length) == 18)
    assert(JsonSyntax.lineEnd(b, 0, 15) == -1) // its newline is not there yet
    assert(JsonSyntax.lineEnd("{\n}\n".getBytes(UTF_8), 0, 4) == -1) // a line break inside is two lines
  }
}
