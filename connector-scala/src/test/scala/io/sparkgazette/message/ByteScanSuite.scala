package io.sparkgazette.message

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

class ByteScanSuite extends AnyFunSuite {
  private def naiveIndexOf(b: Array[Byte], from: Int, until: Int, c: Byte): Int = {
    var i = from
    while (i < until && b(i) != c) i += 1
    i
  }

  // Mostly plain text with rare special bytes, at every alignment, including bytes above 0x7f
  // (UTF-8) and ones just around the special values, where word tricks go wrong.
  private val alphabet: Array[Byte] =
    (Seq('a', 'x', ' ', '!', '#', '[', ']', '0').map(_.toByte) ++
      Seq(0x80, 0xa2, 0xdc, 0xff, 0xc3, 0x1f, 0x21, 0x23, 0x5b, 0x5d).map(_.toByte)).toArray
  private val specials: Array[Byte] = Array('"'.toByte, '\\'.toByte, '\n'.toByte, 0.toByte, 0x1f.toByte, 0x01.toByte)

  private def sample(rng: Random): Array[Byte] = Array.fill(rng.nextInt(70)) {
    if (rng.nextInt(12) == 0) specials(rng.nextInt(specials.length)) else alphabet(rng.nextInt(alphabet.length))
  }

  test("fieldStop finds the first comma, newline or quote as a byte-at-a-time search does") {
    val rng = new Random(11)
    val stops = Set(','.toByte, '\n'.toByte, '"'.toByte)
    for (_ <- 0 until 20000) {
      val b = sample(rng).map(x => if (x == '\\'.toByte) ','.toByte else x)
      val from = if (b.isEmpty) 0 else rng.nextInt(b.length + 1)
      val until = from + rng.nextInt(b.length - from + 1)
      val naive = (from until until).find(i => stops(b(i))).getOrElse(until)
      assert(ByteScan.fieldStop(b, from, until) == naive, s"${b.toSeq} [$from, $until)")
    }
  }

  test("indexOf finds the first byte as a byte-at-a-time search does, at every offset and length") {
    val rng = new Random(7)
    for (_ <- 0 until 20000) {
      val b = sample(rng)
      val from = if (b.isEmpty) 0 else rng.nextInt(b.length + 1)
      val until = from + rng.nextInt(b.length - from + 1)
      for (c <- Seq('\n'.toByte, '"'.toByte, 0xff.toByte, 0.toByte))
        assert(ByteScan.indexOf(b, from, until, c) == naiveIndexOf(b, from, until, c), s"${b.toSeq} [$from, $until) $c")
    }
  }
}
