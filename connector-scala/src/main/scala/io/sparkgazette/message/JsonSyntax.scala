package io.sparkgazette.message

/** Checks that bytes hold exactly one well-formed JSON value (RFC 8259), in one pass and without
  * building anything. Reading ndjson, Gazette rejects a line its decoder cannot parse; so do we,
  * without paying for a tree.
  */
object JsonSyntax {

  /** None when `b[from, until)` is one JSON value with optional surrounding whitespace; otherwise
    * what is wrong and at which byte, counted from `from`.
    */
  def check(b: Array[Byte], from: Int, until: Int): Option[String] = checkLine(b, from, until).left.toOption

  /** As [[check]]; a well-formed value also says whether it holds raw line breaks (they can
    * only be whitespace between tokens).
    */
  def checkLine(b: Array[Byte], from: Int, until: Int): Either[String, Boolean] = checkLine(b, from, until, null)

  /** As [[checkLine]], writing down in `members` (when not null) where each member of a
    * document that is an object lies.
    */
  def checkLine(b: Array[Byte], from: Int, until: Int, members: Members): Either[String, Boolean] = {
    val s = new Check(b, from, until, members = members)
    try { s.document(); Right(s.lineBreaks) }
    catch { case e: Malformed => Left(e.getMessage) }
  }

  /** The index of the newline that ends the line at `b(from)` when the line is one well-formed
    * JSON value: found and checked in one pass, where [[check]] needs the line's end first. -1
    * when the line is anything else, or its newline is not in `b[from, until)`: [[check]] over
    * the line then says what is wrong.
    *
    * A newline is never whitespace here, nor accepted by any token, so the pass stops at the
    * first newline: a line this accepts is exactly one that [[check]] accepts.
    */
  def lineEnd(b: Array[Byte], from: Int, until: Int, members: Members = null): Int = {
    val s = new Check(b, from, until, newlineEnds = true, members = members)
    try s.line()
    catch { case _: Malformed => -1 }
  }

  /** Where the members of a document that is an object lie, as a check finds them, and what a
    * parser's limits may refuse in them: for each, in order, [[Fields]] ints: the index of its
    * key's opening quote, of the byte after its key's closing quote, of the comma or brace that
    * ends it; how deep its value nests (0 for a scalar), its longest number, key and string (in
    * bytes, their escapes included), and 1 when a string holds bytes that are not ASCII, else 0.
    * Reused from document to document; [[objectChecked]] is false when the last document checked
    * is not an object (or the check failed).
    */
  final class Members {
    private var spans = new Array[Int](48)
    private var n = 0
    private[JsonSyntax] var isObject = false

    def objectChecked: Boolean = isObject
    def count: Int = n / Members.Fields

    /** The members, their offsets less `from` (see [[Members]]). */
    def relativeTo(from: Int): Array[Int] = {
      val out = java.util.Arrays.copyOf(spans, n)
      var i = 0
      while (i < n) { out(i) -= from; out(i + 1) -= from; out(i + 2) -= from; i += Members.Fields }
      out
    }

    private[JsonSyntax] def reset(): Unit = { n = 0; isObject = false }

    private[JsonSyntax] def add(v: Int): Unit = {
      if (n == spans.length) spans = java.util.Arrays.copyOf(spans, n * 2)
      spans(n) = v
      n += 1
    }
  }

  object Members {
    final val Fields = 8
    final val KeyStart = 0
    final val KeyEnd = 1
    final val End = 2
    final val Depth = 3
    final val LongestNumber = 4
    final val LongestKey = 5
    final val LongestString = 6
    final val NotAscii = 7
  }

  private final class Malformed(msg: String) extends Exception(msg, null, false, false)
  private val NotOneLine = new Malformed("not one JSON document on this line")

  private final class Check(b: Array[Byte], from: Int, until: Int, newlineEnds: Boolean = false,
      members: Members = null) {
    if (members != null) members.reset()
    private var i = from
    // Open containers, innermost last: true for an object. Iterative, so nesting depth cannot
    // overflow the stack.
    private var stack = new Array[Boolean](16)
    private var depth = 0

    def document(): Unit = {
      body()
      if (i < until) fail(s"unexpected ${show(b(i))} after the document")
      if (members != null) members.isObject = topObject
    }

    def line(): Int = {
      body()
      if (i < until && b(i) == '\n') { if (members != null) members.isObject = topObject; i }
      else fail("no newline after the document")
    }

    private var topObject = false
    // Of the member being read: how deep its value nests, its longest number, key and string,
    // whether a string holds bytes that are not ASCII.
    private var deepest, longestNumber, longestKey, longestString, notAscii = 0
    // A member of the document's own object: its key's span (the key read here), then its end
    // and what its value holds.
    private def recording: Boolean = members != null && depth == 1 && topObject
    private def key(): Unit =
      if (recording) {
        deepest = 1; longestNumber = 0; longestKey = 0; longestString = 0; notAscii = 0
        members.add(i); string(key = true); members.add(i)
      } else string(key = true)
    private def memberEnd(): Unit =
      if (recording) {
        members.add(i); members.add(deepest - 1); members.add(longestNumber); members.add(longestKey)
        members.add(longestString); members.add(notAscii)
      }

    // The value, its containers closed, and the whitespace after it.
    private def body(): Unit = {
      ws()
      if (i >= until) fail("empty document")
      value()
      while (depth > 0) {
        ws()
        val inObject = stack(depth - 1)
        peek match {
          case ',' =>
            if (inObject) memberEnd()
            i += 1; ws()
            if (inObject) { key(); ws(); expect(':') }
            value()
          case '}' if inObject => memberEnd(); i += 1; depth -= 1
          case ']' if !inObject => i += 1; depth -= 1
          case c => fail(s"expected ',' or '${if (inObject) '}' else ']'}' but found ${show(c)}")
        }
      }
      ws()
    }

    // One value; a container is opened and its first member read, the rest is left to document().
    private def value(): Unit = {
      ws()
      peek match {
        case '{' =>
          if (depth == 0) topObject = true
          i += 1; ws()
          if (peek == '}') i += 1
          else { push(true); key(); ws(); expect(':'); value() }
        case '[' =>
          i += 1; ws()
          if (peek == ']') i += 1
          else { push(false); value() }
        case '"' => string()
        case 't' => literal("true")
        case 'f' => literal("false")
        case 'n' => literal("null")
        case c if c == '-' || (c >= '0' && c <= '9') => number()
        case c => fail(s"unexpected ${show(c)}")
      }
    }

    private def push(obj: Boolean): Unit = {
      if (depth == stack.length) stack = java.util.Arrays.copyOf(stack, depth * 2)
      stack(depth) = obj
      depth += 1
      if (depth > deepest) deepest = depth
    }

    private def string(key: Boolean = false): Unit = {
      expect('"')
      val start = i
      while (true) {
        // Until a member's first byte that is not ASCII, the scan stops at such bytes too.
        val findHigh = members != null && notAscii == 0
        i = ByteScan.stringStop(b, i, until, orHigh = findHigh)
        if (i >= until) fail("unterminated string")
        val c = b(i) & 0xff
        if (c >= 0x80) notAscii = 1 // the next scan goes on from this byte
        else if (c == '"') {
          if (key) longestKey = math.max(longestKey, i - start) else longestString = math.max(longestString, i - start)
          i += 1; return
        } else if (c < 0x20) fail(s"control character 0x${Integer.toHexString(c)} in a string")
        else {
          i += 1 // past the backslash
          peek match {
            case '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' => i += 1
            case 'u' =>
              i += 1
              for (_ <- 0 until 4) { if (Character.digit(peek, 16) < 0) fail("bad \\u escape"); i += 1 }
            case other => fail(s"bad escape \\${other.toChar}")
          }
        }
      }
    }

    private def number(): Unit = {
      val start = i
      try number1()
      finally longestNumber = math.max(longestNumber, i - start)
    }

    private def number1(): Unit = {
      if (peek == '-') i += 1
      if (peek == '0') i += 1 else digits()
      if (i < until && b(i) == '.') { i += 1; digits() }
      if (i < until && (b(i) == 'e' || b(i) == 'E')) {
        i += 1
        if (i < until && (b(i) == '+' || b(i) == '-')) i += 1
        digits()
      }
    }

    private def digits(): Unit = {
      if (!isDigit(peek)) fail(s"expected a digit but found ${show(peek)}")
      while (i < until && isDigit(b(i))) i += 1
    }

    private def literal(word: String): Unit = {
      var k = 0
      while (k < word.length) { if (peek != word.charAt(k)) fail(s"invalid literal, expected '$word'"); i += 1; k += 1 }
    }

    private def isDigit(c: Int): Boolean = c >= '0' && c <= '9'
    var lineBreaks = false

    private def ws(): Unit =
      while (i < until && { val c = b(i); c == ' ' || c == '\t' || c == '\r' || c == '\n' && !newlineEnds }) {
        if (b(i) == '\n' || b(i) == '\r') lineBreaks = true
        i += 1
      }
    private def peek: Int = if (i < until) b(i) else fail("unexpected end of document")
    private def expect(c: Char): Unit = if (peek == c) i += 1 else fail(s"expected '$c' but found ${show(peek)}")
    private def show(c: Int): String =
      if (c >= 0x20 && c < 0x7f) s"'${c.toChar}'" else s"byte 0x${Integer.toHexString(c & 0xff)}"
    // Finding the line's end, a failure only sends the caller the slow way, which says why: no
    // message is built, no exception allocated, for lines that are blank or malformed.
    private def fail(msg: => String): Nothing =
      if (newlineEnds) throw NotOneLine else throw new Malformed(s"$msg at byte ${i - from}")
  }
}
