package io.sparkgazette.spark
package handoff

import org.scalatest.funsuite.AnyFunSuite

/** The window of messages a real-time task's source emitted, as its writer looks them up. */
class SequencedMessagesSuite extends AnyFunSuite {
  test("messages are numbered in the order emitted, and found by journal, producer and clock, newest first") {
    val m = new SequencedMessages(capacity = 8)
    assert(m.newest == -1 && m.oldest == 0)
    m.add("a", 1L, 100L, 100L)
    m.add("b", 1L, 100L, 100L) // the same producer and clock in another journal
    m.add("a", 2L, 100L, 100L)
    m.add("a", 1L, 100L, 101L) // committed again after a rollback
    assert(m.newest == 3 && m.oldest == 0)
    assert(m.find("a", 1L, 100L) == List(3L, 0L))
    assert(m.find("b", 1L, 100L) == List(1L))
    assert(m.find("a", 2L, 100L) == List(2L))
    assert(m.find("a", 1L, 99L).isEmpty && m.find("c", 1L, 100L).isEmpty)
    assert(m.sequenceClock(0) == 100L && m.sequenceClock(3) == 101L)
  }

  test("a message whose sequence clock is not its clock was committed again: an earlier copy may have been emitted") {
    val m = new SequencedMessages(capacity = 4)
    m.add("a", 1L, 100L, 100L)
    m.add("a", 1L, 90L, 101L)
    assert(!m.recommits(0) && m.recommits(1))
  }

  test("past its capacity, the oldest messages leave the window and are found no more") {
    val m = new SequencedMessages(capacity = 3)
    (0 until 5).foreach(i => m.add("a", 1L, 100L + i, 100L + i))
    assert(m.newest == 4 && m.oldest == 2)
    assert(m.find("a", 1L, 100L).isEmpty && m.find("a", 1L, 101L).isEmpty)
    assert(m.find("a", 1L, 102L) == List(2L) && m.find("a", 1L, 104L) == List(4L))
    assert(m.sequenceClock(4) == 104L)
    // Copies of one message, emitted in turn, leave the window in turn.
    (0 until 3).foreach(_ => m.add("a", 7L, 5L, 5L))
    assert(m.find("a", 7L, 5L) == List(7L, 6L, 5L))
    m.add("a", 1L, 1L, 1L)
    assert(m.find("a", 7L, 5L) == List(7L, 6L))
  }

  test("two messages whose producer and clock hash alike are told apart, and each leaves the window alone") {
    val k = 0x9e3779b97f4a7c15L
    val (p1, c1) = (11L, 500L)
    val p2 = 12L
    val c2 = c1 ^ (p1 * k) ^ (p2 * k) // p2 * k ^ c2 == p1 * k ^ c1
    val m = new SequencedMessages(capacity = 2)
    m.add("a", p1, c1, c1)
    m.add("a", p2, c2, c2)
    assert(m.find("a", p1, c1) == List(0L) && m.find("a", p2, c2) == List(1L))
    m.add("a", 3L, 3L, 3L) // the first leaves the window; the second stays findable
    assert(m.find("a", p1, c1).isEmpty && m.find("a", p2, c2) == List(1L))
  }

  test("a task holds 16384 messages unless a test asks for fewer") {
    assert(new SequencedMessages().capacity == SequencedMessages.Capacity)
    sys.props(SequencedMessages.TestCapacity) = "3"
    try assert(new SequencedMessages().capacity == 3)
    finally sys.props -= SequencedMessages.TestCapacity
  }
}
