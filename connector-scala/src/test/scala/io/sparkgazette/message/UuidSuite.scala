package io.sparkgazette.message

import java.time.Instant
import java.util.UUID

import org.scalacheck.Gen
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

class UuidSuite extends AnyFunSuite with ScalaCheckPropertyChecks {

  test("a known vector: the v1 fields hold the clock, the counter and flags, and the producer") {
    val producer = ProducerId(0x010203040506L)
    val timestamp = 0x123456789abcdefL
    val uuid = Uuid.build(producer, (timestamp << 4) | 5, Flags.AckTxn)
    assert(uuid.toString == "89abcdef-4567-1123-9402-010203040506")
    // Java's own reading of the v1 fields agrees.
    assert(uuid.version == 1 && uuid.variant == 2)
    assert(uuid.timestamp == timestamp)
    assert(uuid.clockSequence == ((5 << 10) | Flags.AckTxn))
    assert(uuid.node == producer.value)
  }

  test("producer, clock and flags round-trip through the UUID and its string form") {
    forAll(Gen.chooseNum(0L, 0xffffffffffffL), Gen.chooseNum(1L, Long.MaxValue), Gen.chooseNum(0, Flags.Max)) {
      (p, clock, flags) =>
        whenever(p >= 0 && p <= 0xffffffffffffL && clock > 0 && flags >= 0 && flags <= Flags.Max) {
          val uuid = Uuid.parse(Uuid.build(ProducerId(p), clock, flags).toString).get
          assert(Uuid.producer(uuid) == ProducerId(p))
          assert(Uuid.clock(uuid) == clock)
          assert(Uuid.flags(uuid) == flags)
        }
    }
  }

  test("parse reads Gazette's accepted forms, any case, and refuses near misses") {
    val u = UUID.fromString("89abcdef-4567-1123-9402-010203040506")
    for (text <- Seq(
        "89abcdef-4567-1123-9402-010203040506",
        "89ABCDEF-4567-1123-9402-010203040506",
        "{89abcdef-4567-1123-9402-010203040506}",
        "urn:uuid:89abcdef-4567-1123-9402-010203040506",
        "89abcdef456711239402010203040506"
      ))
      assert(Uuid.parse(text) == Some(u), text)
    for (text <- Seq(
        "89abcdef-4567-1123-9402-01020304050g",
        "89abcdef-4567-1123-9402+010203040506",
        "89abcdef04567-1123-9402-01020304050",
        "89abcdef-4567-1123-9402-0102030405060",
        ""
      ))
      assert(Uuid.parse(text) == None, text)
    val bytes = "x89ABCDEF-4567-1123-9402-010203040506x".getBytes("US-ASCII")
    assert(Uuid.canonical(bytes, 1, 37) == u)
    assert(Uuid.canonical(bytes, 0, 36) == null && Uuid.canonical(bytes, 1, 36) == null)
  }

  test("flags beyond 10 bits are refused") {
    intercept[IllegalArgumentException](Uuid.build(ProducerId(1), 16, 0x400))
  }

  test("the zero UUID has clock 0") {
    assert(Uuid.clock(Uuid.Zero) == 0 && Uuid.clock(new UUID(0, 0)) == 0)
  }

  test("clocks convert to and from instants at 100 ns resolution, from the Gregorian epoch") {
    val t = Instant.parse("2026-11-22T01:02:03.456789100Z")
    assert(Clock.toInstant(Clock.fromInstant(t)) == t)
    assert(Clock.fromInstant(Instant.parse("1582-10-15T00:00:00Z")) == 0L)
    assert(Clock.fromInstant(Instant.EPOCH) == Clock.GregorianToUnix << 4)
  }

  test("producer ids are random with the multicast bit set") {
    val ids = Seq.fill(100)(ProducerId.random())
    assert(ids.distinct.size == 100)
    assert(ids.forall(id => ((id.value >>> 40) & 0x01) == 1))
  }

  test("a monotonic clock never goes back and ticks by one microsecond") {
    val c = new MonotonicClock()
    c.update(Instant.parse("2026-01-01T00:00:00Z"))
    val a = c.tick()
    c.update(Instant.parse("2025-01-01T00:00:00Z"))
    assert(c.tick() == a + Clock.Tick)
  }

  test("only ASCII hex digits make a UUID, as Go's parser has it") {
    val fullwidthEight = "\uFF18"
    assert(Uuid.parse(fullwidthEight + "9abcdef-4567-1123-9402-010203040506").isEmpty)
    assert(Uuid.parse(fullwidthEight + "9abcdef45671123940201020304050" + "6").isEmpty)
    assert(Uuid.parse("89ABCDEF-4567-1123-9402-010203040506").isDefined)
  }
}
