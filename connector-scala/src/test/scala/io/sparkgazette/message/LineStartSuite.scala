package io.sparkgazette.message

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8

import org.scalacheck.Gen
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

class LineStartSuite extends AnyFunSuite with ScalaCheckPropertyChecks {

  private def chunks(text: String, at: Long, sizes: Seq[Int]): Iterator[JournalBytes] = {
    val bytes = text.getBytes(UTF_8)
    var i = 0
    val out = Seq.newBuilder[JournalBytes]
    val it = Iterator.continually(sizes).flatten
    while (i < bytes.length) {
      val n = math.min(bytes.length - i, it.next())
      out += JournalBytes(at + i, ByteBuffer.wrap(bytes, i, n).slice())
      i += n
    }
    out.result().iterator
  }

  private def rest(ls: LineStart): String =
    ls.map { c =>
      val b = new Array[Byte](c.data.remaining()); c.data.duplicate().get(b); new String(b, UTF_8)
    }.mkString

  test("a line begins at `from` when the byte before it is a newline") {
    val text = "ab\ncd\nef"
    val ls = new LineStart(3, chunks(text.substring(2), 2, Seq(100)))
    assert(rest(ls) == "cd\nef" && ls.start == 3)
  }

  test("otherwise the first line begins after the next newline, in whatever chunk it comes") {
    val ls = new LineStart(4, chunks("abcd\nef\ngh", 0, Seq(1)).drop(3))
    assert(rest(ls) == "ef\ngh" && ls.start == 5)
  }

  test("no newline: no bytes, and no start") {
    val ls = new LineStart(10, chunks("abcdef", 9, Seq(2)))
    assert(rest(ls).isEmpty && ls.start == -1)
  }

  test("offset 0 begins a line") {
    val ls = new LineStart(0, chunks("ab\n", 0, Seq(2)))
    assert(rest(ls) == "ab\n" && ls.start == 0)
  }

  test("the start found is the first line start at or after `from`, for every `from` and chunking") {
    val text = Gen.listOf(Gen.oneOf("a", "b", "\n")).map(_.mkString)
    forAll(text, Gen.choose(1, 7), Gen.choose(0, 40)) { (t, size, f) =>
      whenever(f <= t.length) {
        val from = f.toLong
        val skip = math.max(0, f - 1)
        val ls = new LineStart(from, chunks(t.substring(skip), skip, Seq(size)))
        val after = rest(ls)
        val expected = if (f == 0) 0 else { val i = t.indexOf('\n', f - 1); if (i < 0) -1 else i + 1 }
        assert(ls.start == expected)
        assert(after == (if (expected < 0) "" else t.substring(expected)))
      }
    }
  }

  test(
    "after an offset jump (bytes removed by retention) a message begins at the first byte, as MessageIterator reads it") {
    val ls = new LineStart(80, chunks("{\"a\":1}\n{\"b\":2}\n", 100, Seq(4)))
    assert(ls.hasNext && ls.start == 100)
    assert(rest(ls) == "{\"a\":1}\n{\"b\":2}\n")
    // A jump after bytes that hold no newline.
    val late = new LineStart(10, chunks("abc", 9, Seq(3)) ++ chunks("{}\n", 50, Seq(8)))
    assert(rest(late) == "{}\n" && late.start == 50)
  }
}
