package io.sparkgazette.spark
package source
package planning

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8

import io.sparkgazette.message.{Flags, Framing, JournalBytes, MessageIterator, ProducerId, Uuid}
import io.sparkgazette.spark.source.planning.OffsetsForTimes.{FragmentTime, clockAt, firstAtOrAfter, searchFrom}
import org.scalatest.funsuite.AnyFunSuite

class OffsetsForTimesSuite extends AnyFunSuite {
  private val t = 1767225600000L // 2026-01-01T00:00:00Z
  private val s = t / 1000 // the same, in a fragment's mod_time seconds

  test("the search starts at the first fragment that may hold a message at or after the time") {
    val fragments = Seq(FragmentTime(0, 100, s - 300), FragmentTime(100, 200, s - 120), FragmentTime(200, 300, s - 30),
      FragmentTime(300, 400, s + 5), FragmentTime(400, 450, 0))
    assert(searchFrom(fragments, t, slackMillis = 60000) == Some(200)) // s-120 + 1s + 60s <= t; s-30 + 1s + 60s is not
    assert(searchFrom(fragments, t, slackMillis = 0) == Some(300))
    assert(searchFrom(fragments.reverse, t, slackMillis = 0) == Some(300), "listings are taken in offset order")
    assert(searchFrom(fragments, t) == Some(200), "the default slack is a minute")
  }

  test("a fragment's mod_time is whole seconds, rounded down: the second it names may hold the time") {
    assert(searchFrom(Seq(FragmentTime(0, 10, s), FragmentTime(10, 20, 0)), t + 999, slackMillis = 0) == Some(0))
    assert(searchFrom(Seq(FragmentTime(0, 10, s), FragmentTime(10, 20, 0)), t + 1000, slackMillis = 0) == Some(10))
  }

  test("only a leading run of old fragments is skipped; local ones, and one persisted late, stop it") {
    val late = Seq(FragmentTime(0, 100, s - 300), FragmentTime(100, 200, s + 10), FragmentTime(200, 300, s - 300))
    assert(searchFrom(late, t, slackMillis = 0) == Some(100))
    assert(searchFrom(Seq(FragmentTime(0, 100, 0), FragmentTime(100, 200, s - 300)), t, slackMillis = 0) == Some(0))
  }

  test("every fragment older than the time: the search starts at the last one's end; no fragments: no narrowing") {
    assert(searchFrom(Seq(FragmentTime(50, 100, s - 300), FragmentTime(100, 200, s - 200)), t, slackMillis = 0) ==
      Some(200))
    assert(searchFrom(Nil, t) == None)
  }

  test("overlapping fragments (a cover set) are narrowed without losing the bytes of either") {
    val overlapping = Seq(FragmentTime(0, 100, s - 300), FragmentTime(50, 150, s + 1), FragmentTime(150, 200, 0))
    assert(searchFrom(overlapping, t, slackMillis = 0) == Some(50))
  }

  private val p1 = ProducerId(0x010203040506L)
  private val p2 = ProducerId(0x0a0b0c0d0e0fL)

  private def line(producer: ProducerId, millis: Long, flags: Int = Flags.OutsideTxn): String =
    s"""{"_meta":{"uuid":"${Uuid.build(producer, clockAt(millis) + 160, flags)}"},"v":1}""" + "\n"

  private def messages(lines: String*) = {
    val bytes = lines.mkString.getBytes(UTF_8)
    new MessageIterator("j", Framing.forContentType(Framing.JsonLines).toOption.get,
      Iterator(JournalBytes(1000, ByteBuffer.wrap(bytes))), holdTail = true)
  }

  test("the first message in journal order whose clock is at or after the time, whatever follows it") {
    val lines = Seq(line(p1, t - 5000), line(p2, t + 2000), line(p1, t - 1000), line(p1, t + 1))
    val begins = lines.scanLeft(1000L)(_ + _.length)
    assert(firstAtOrAfter(messages(lines: _*), clockAt(t)) == Some(begins(1)))
    assert(firstAtOrAfter(messages(lines: _*), clockAt(t + 3000)) == None)
    assert(firstAtOrAfter(messages(lines: _*), clockAt(t - 10000)) == Some(1000))
  }

  test("a message exactly at the time matches; one a tick of 100ns before does not") {
    val at = s"""{"_meta":{"uuid":"${Uuid.build(p1, clockAt(t), Flags.OutsideTxn)}"}}""" + "\n"
    val before = s"""{"_meta":{"uuid":"${Uuid.build(p1, clockAt(t) - 1, Flags.OutsideTxn)}"}}""" + "\n"
    assert(firstAtOrAfter(messages(before, at), clockAt(t)) == Some(1000 + before.length))
  }

  test("messages without a UUID, ACKs' predecessors, malformed bytes and a partial first line are passed over") {
    val partial = "ta\":1}\n" // the search began inside a message
    val noUuid = """{"v":2}""" + "\n"
    val garbage = "{not json\n"
    val ack = line(p2, t + 10, Flags.AckTxn)
    assert(
      firstAtOrAfter(messages(partial, noUuid, garbage, ack), clockAt(t)) ==
        Some(1000 + partial.length + noUuid.length + garbage.length),
      "an ACK is a message with a time"
    )
    assert(firstAtOrAfter(messages(noUuid, noUuid), clockAt(0)) == None)
  }

  test("a last message not yet whole is not an answer") {
    val whole = line(p1, t - 1)
    val unfinished = line(p1, t + 1).dropRight(3)
    assert(firstAtOrAfter(messages(whole, unfinished), clockAt(t)) == None)
  }
}
