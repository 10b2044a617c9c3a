package io.sparkgazette.message

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

class ByteScanStringStopSuite extends AnyFunSuite {
  private def naive(b: Array[Byte], from: Int, until: Int, orHigh: Boolean): Int = {
    var i = from
    while (i < until && b(i) != '"' && b(i) != '\\' && (b(i) & 0xff) >= 0x20 && !(orHigh && b(i) < 0)) i += 1
    i
  }

  for (orHigh <- Seq(false, true))
    test(s"stringStop (orHigh $orHigh) stops where a byte-by-byte scan stops, at every alignment") {
      val seed = System.nanoTime()
      val rnd = new Random(seed)
      // Mostly plain bytes (ASCII and UTF-8's high bytes), sometimes a byte that ends the run.
      val ends = Array[Byte]('"', '\\', 0, 0x1f, '\n')
      val plain =
        Array[Byte]('x', ' ', 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80.toByte, 0xa2.toByte, 0xdc.toByte, 0xff.toByte)
      for (_ <- 0 until 20000) {
        val b = Array.fill(rnd.nextInt(40))(
          if (rnd.nextInt(12) == 0) ends(rnd.nextInt(ends.length)) else plain(rnd.nextInt(plain.length)))
        val from = if (b.isEmpty) 0 else rnd.nextInt(b.length + 1)
        val until = from + rnd.nextInt(b.length - from + 1)
        withClue(s"seed $seed, bytes ${b.map(_ & 0xff).mkString(",")} from $from until $until: ") {
          assert(ByteScan.stringStop(b, from, until, orHigh) == naive(b, from, until, orHigh))
        }
      }
    }

  test("stringStop past the end returns where it started") {
    assert(ByteScan.stringStop(Array[Byte]('a', 'b'), 3, 2) == 3)
    // Also where `from` plus a word or two would overflow.
    for (from <- Int.MaxValue - 20 to Int.MaxValue) assert(ByteScan.stringStop(new Array[Byte](32), from, 0) == from)
  }
}
