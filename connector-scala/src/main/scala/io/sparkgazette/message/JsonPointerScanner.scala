package io.sparkgazette.message

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Try

/** Finds the string at a JSON pointer (RFC 6901, e.g. `/_meta/uuid`) in one JSON document by
  * scanning its bytes: values off the pointer's path are skipped, never materialized. This is
  * the per-message hot path of reading ndjson journals.
  *
  * The scan validates only what it passes through; a document that is malformed elsewhere is
  * not this scanner's concern.
  */
final class JsonPointerScanner(pointer: String) {
  require(pointer.isEmpty || pointer.startsWith("/"), s"JSON pointer '$pointer' must be empty or start with '/'")

  private val path: Array[Array[Byte]] =
    if (pointer.isEmpty) Array.empty
    else pointer.substring(1).split("/", -1).map(_.replace("~1", "/").replace("~0", "~").getBytes(UTF_8))

  /** How many members deep the pointer goes. */
  def pathLength: Int = path.length

  /** The string at the pointer in `doc[from, until)`: Right(Some(s)), Right(None) when absent
    * (or not a string), or Left(reason) when the document is malformed on the way.
    */
  def find(doc: Array[Byte], from: Int, until: Int): Either[String, Option[String]] =
    try Right(new Scan(doc, from, until).find())
    catch { case e: MalformedJson => Left(e.getMessage) }

  /** [[find]] for the per-message path, building nothing: where the string at the pointer lies
    * in `doc`, as `(start << 32) | end`, when it holds no escapes; [[JsonPointerScanner.Absent]]
    * when no string is there; [[JsonPointerScanner.AskFind]] when only [[find]] can say (an
    * escaped string, or a malformed document and why).
    */
  def stringBounds(doc: Array[Byte], from: Int, until: Int): Long =
    try new Scan(doc, from, until).bounds()
    catch { case _: MalformedJson => JsonPointerScanner.AskFind }

  /** Where a value set at the pointer goes in the object `doc[from, until)`: in place of the
    * value there, or inserted into the deepest object of the pointer's path that exists. Left when
    * the document is not an object, or a value on the path is not an object or its key is repeated.
    */
  def place(doc: Array[Byte], from: Int, until: Int): Either[String, JsonPointerScanner.Place] =
    try new Scan(doc, from, until).locate()
    catch { case e: MalformedJson => Left(e.getMessage) }

  /** The members still missing below depth `depth`, as JSON text wrapping `value` (a JSON value). */
  def nest(depth: Int, value: String): String =
    path.drop(depth).foldRight(value)((key, inner) =>
      "{" + JsonPointerScanner.quote(new String(key, UTF_8)) + ":" + inner + "}")

  private final class MalformedJson(msg: String) extends Exception(msg, null, false, false)

  private final class Scan(b: Array[Byte], from: Int, until: Int) {
    private var i = from

    def find(): Option[String] =
      if (!navigate()) None
      else if (peek == '"') Some(string())
      else { value(); None }

    def bounds(): Long =
      if (!navigate()) JsonPointerScanner.Absent
      else if (peek == '"') {
        val start = skipString()
        if (escaped) JsonPointerScanner.AskFind else (start.toLong << 32) | (i - 1)
      } else { value(); JsonPointerScanner.Absent }

    // Positions the scan at the pointer's value; false when the document has none there.
    private def navigate(): Boolean = {
      var depth = 0
      while (true) {
        ws()
        if (depth == path.length) return true
        peek match {
          case '{' =>
            i += 1
            if (!member(path(depth))) return false
            depth += 1
          case '[' =>
            val index = parseIndex(path(depth)).getOrElse { value(); return false }
            i += 1
            var k = 0
            ws()
            if (peek == ']') return false
            while (k < index) {
              value(); ws()
              if (peek == ']') return false
              expect(','); k += 1
            }
            depth += 1
          case _ =>
            value(); return false
        }
      }
      false
    }

    def locate(): Either[String, JsonPointerScanner.Place] = {
      if (path.isEmpty) return Left("the empty pointer names the whole document")
      var depth = 0
      while (true) {
        ws()
        if (peek != '{')
          return Left(if (depth == 0) "the message is not a JSON object"
            else s"${pointerPrefix(depth)} is not an object")
        i += 1
        val open = i
        ws()
        val empty = peek == '}'
        if (!member(path(depth))) return Right(JsonPointerScanner.Insert(depth, open, empty))
        val start = i
        value()
        val end = i
        // Go's decoder keeps a key's last occurrence: a UUID set into the first would be lost.
        if (repeats(path(depth)))
          return Left(s"duplicate key ${pointerPrefix(depth + 1)} (readers take its last occurrence)")
        depth += 1
        if (depth == path.length) return Right(JsonPointerScanner.Replace(start, end))
        i = start
      }
      Left("unreachable")
    }

    private def pointerPrefix(depth: Int): String =
      path.take(depth).map(k => "/" + new String(k, UTF_8).replace("~", "~0").replace("/", "~1")).mkString

    // Positions the scan at the value of `key` in the current object; false when it is absent.
    private def member(key: Array[Byte]): Boolean = {
      ws()
      if (peek == '}') return false
      while (true) {
        ws()
        val matched = keyEquals(key)
        ws(); expect(':'); ws()
        if (matched) return true
        value(); ws()
        if (peek == '}') return false
        expect(',')
      }
      false
    }

    // Whether `key` occurs again in the current object, after the member the scan has passed.
    private def repeats(key: Array[Byte]): Boolean = {
      ws()
      while (peek != '}') {
        expect(','); ws()
        val matched = keyEquals(key)
        if (matched) return true
        ws(); expect(':'); value(); ws()
      }
      false
    }

    // Keys are short: a loop costs less than Arrays.equals' setup.
    private def keyEquals(key: Array[Byte]): Boolean = {
      val start = skipString()
      val end = i - 1
      if (escaped) java.util.Arrays.equals(unescape(start, end).getBytes(UTF_8), key)
      else if (end - start != key.length) false
      else {
        var k = 0
        while (k < key.length && b(start + k) == key(k)) k += 1
        k == key.length
      }
    }

    private def string(): String = {
      val start = skipString()
      if (escaped) unescape(start, i - 1) else new String(b, start, i - 1 - start, UTF_8)
    }

    // Whether the string skipString() last consumed holds escapes.
    private var escaped = false

    // Consumes a string token; its contents are [the index returned, i - 1).
    private def skipString(): Int = {
      expect('"')
      val start = i
      escaped = false
      while (true) {
        i = ByteScan.stringStop(b, i, until)
        if (i >= until) fail("unterminated string")
        b(i) match {
          case '"' => i += 1; return start
          case '\\' => escaped = true; i += 2
          case _ => i += 1 // a control character: the syntax check's concern, not the scan's
        }
      }
      start
    }

    private def unescape(start: Int, end: Int): String = {
      val sb = new java.lang.StringBuilder
      val s = new String(b, start, end - start, UTF_8)
      var k = 0
      while (k < s.length) {
        val c = s.charAt(k)
        if (c != '\\') sb.append(c)
        else {
          k += 1
          s.charAt(k) match {
            case 'u' => sb.append(Integer.parseInt(s.substring(k + 1, k + 5), 16).toChar); k += 4
            case 'n' => sb.append('\n'); case 't' => sb.append('\t'); case 'r' => sb.append('\r')
            case 'b' => sb.append('\b'); case 'f' => sb.append('\f'); case other => sb.append(other)
          }
        }
        k += 1
      }
      sb.toString
    }

    // Skips one value of any kind.
    private def value(): Unit = {
      ws()
      peek match {
        case '"' => skipString()
        case '{' | '[' =>
          var depth = 0
          var done = false
          while (!done) {
            if (i >= until) fail("unterminated object or array")
            b(i) match {
              case '"' => value(); i -= 1
              case '{' | '[' => depth += 1
              case '}' | ']' => depth -= 1; if (depth == 0) done = true
              case _ =>
            }
            i += 1
          }
        case c
            if c == '-' ||
              (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n' =>
          while (i < until && !isDelimiter(b(i))) i += 1
        case c => fail(s"unexpected '${c.toChar}'")
      }
    }

    private def isDelimiter(c: Byte): Boolean =
      c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n'

    private def parseIndex(token: Array[Byte]): Option[Int] = {
      val s = new String(token, UTF_8)
      if (s.nonEmpty && s.forall(_.isDigit) && (s == "0" || s.head != '0')) Try(s.toInt).toOption else None
    }

    private def ws(): Unit = while (i < until && (b(i) == ' ' || b(i) == '\t' || b(i) == '\r' || b(i) == '\n')) i += 1
    private def peek: Int = if (i < until) b(i) else fail("unexpected end of document")
    private def expect(c: Char): Unit = if (peek == c) i += 1 else fail(s"expected '$c' at byte ${i - from}")
    private def fail(msg: String): Nothing = throw new MalformedJson(msg)
  }
}

object JsonPointerScanner {

  /** Where [[JsonPointerScanner.place]] puts a value set at the pointer. */
  sealed trait Place

  /** The pointer's member is absent: the first `depth` members of its path exist, the deepest
    * an object whose members begin at `at` (just after its `{`), `empty` or not.
    */
  final case class Insert(depth: Int, at: Int, empty: Boolean) extends Place

  /** The pointer's value, whatever it is, is `[start, end)`. */
  final case class Replace(start: Int, end: Int) extends Place

  /** [[JsonPointerScanner.stringBounds]]: no string at the pointer. */
  val Absent: Long = -1L

  /** [[JsonPointerScanner.stringBounds]]: ask [[JsonPointerScanner.find]]. */
  val AskFind: Long = -2L

  /** `s` as a JSON string literal. */
  def quote(s: String): String = {
    val sb = new java.lang.StringBuilder(s.length + 2).append('"')
    s.foreach {
      case '"' => sb.append("\\\"")
      case '\\' => sb.append("\\\\")
      case c if c < 0x20 => sb.append(f"\\u${c.toInt}%04x")
      case c => sb.append(c)
    }
    sb.append('"').toString
  }
}
