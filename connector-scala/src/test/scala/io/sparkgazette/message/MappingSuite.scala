package io.sparkgazette.message

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

class MappingSuite extends AnyFunSuite {
  private def b(s: String) = s.getBytes(UTF_8)

  test("FNV-1a 32 matches the published test vectors") {
    assert(Mapping.fnv1a32(b("")) == 0x811c9dc5)
    assert(Mapping.fnv1a32(b("a")) == 0xe40c292c)
    assert(Mapping.fnv1a32(b("foobar")) == 0xbf9cf968)
  }

  test("modulo takes the unsigned hash modulo the journal count") {
    val journals = IndexedSeq("a/0", "a/1", "a/2")
    // FNV-1a("foobar") = 0xbf9cf968 = 3214735720, and 3214735720 % 3 = 1.
    assert(Mapping.Modulo(journals).journalFor(b("foobar")) == "a/1")
  }

  test("rendezvous moves only the keys of an added journal") {
    val before = Mapping.Rendezvous((0 until 4).map(i => s"t/$i"))
    val after = Mapping.Rendezvous((0 until 5).map(i => s"t/$i"))
    val keys = (0 until 2000).map(i => b(s"key-$i"))
    val moved = keys.filter(k => before.journalFor(k) != after.journalFor(k))
    assert(moved.nonEmpty && moved.forall(k => after.journalFor(k) == "t/4"))
    assert(keys.map(before.journalFor).distinct.size == 4)
  }

  test("mappings are named as the options name them") {
    assert(Mapping.named("rendezvous", IndexedSeq("x")).map(_.journalFor(b("k"))) == Right("x"))
    assert(Mapping.named("hash", IndexedSeq("x")) ==
      Left("unknown mapping 'hash'; expected modulo, rendezvous or random"))
  }
}
