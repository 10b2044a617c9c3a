package io.sparkgazette.spark
package handoff

import scala.collection.mutable

/** The sequence clocks (see [[io.sparkgazette.message.Sequencer.sequenceClock]]) of the last
  * committed messages a real-time task's source emitted, numbered in the order it emitted them,
  * for the task's writer to find each row's (see [[sink.realtime.OriginUuids]]). Only the task's
  * thread uses it.
  */
private[spark] final class SequencedMessages(val capacity: Int = SequencedMessages.capacity) {
  private var journals: Array[String] = _
  private var producers, clocks, sequenceClocks: Array[Long] = _
  private var added = 0L
  // The numbers of the messages held, by a hash of their producer and clock: mostly one each; more
  // where a producer committed a message again after a rollback to an older ACK.
  private val numbers = mutable.LongMap[List[Long]]()

  /** Records that `journal`'s message at `clock` of `producer` was emitted, at `sequenceClock`. */
  def add(journal: String, producer: Long, clock: Long, sequenceClock: Long): Unit = {
    if (journals == null) {
      journals = new Array[String](capacity)
      producers = new Array[Long](capacity)
      clocks = new Array[Long](capacity)
      sequenceClocks = new Array[Long](capacity)
    }
    val at = (added % capacity).toInt
    if (added >= capacity) {
      val key = SequencedMessages.key(producers(at), clocks(at))
      numbers(key).filterNot(_ == added - capacity) match {
        case Nil => numbers.remove(key)
        case rest => numbers(key) = rest
      }
    }
    journals(at) = journal
    producers(at) = producer
    clocks(at) = clock
    sequenceClocks(at) = sequenceClock
    val key = SequencedMessages.key(producer, clock)
    numbers(key) = added :: numbers.getOrElse(key, Nil)
    added += 1
  }

  /** The number of the message emitted last (-1: none). */
  def newest: Long = added - 1

  /** The number of the oldest message held: those before it have left the window. */
  def oldest: Long = math.max(0L, added - capacity)

  /** Whether message `n`, still held, committed a clock at or below one its producer committed
    * before (after a rollback to an older ACK): an earlier copy of it may have been emitted.
    */
  def recommits(n: Long): Boolean = {
    val at = (n % capacity).toInt
    sequenceClocks(at) != clocks(at)
  }

  /** The numbers of the messages held that are `journal`'s at `clock` of `producer`, newest first. */
  def find(journal: String, producer: Long, clock: Long): List[Long] =
    numbers.getOrElse(SequencedMessages.key(producer, clock), Nil).filter { n =>
      val at = (n % capacity).toInt
      producers(at) == producer && clocks(at) == clock && journals(at) == journal
    }

  /** The sequence clock of message `n`, still held. */
  def sequenceClock(n: Long): Long = sequenceClocks((n % capacity).toInt)
}

private[spark] object SequencedMessages {
  val Capacity = 16384

  /** A system property that makes tasks hold fewer messages, for tests to hold rows back past them. */
  private[spark] val TestCapacity = "sparkgazette.test.sequencedMessages"

  /** How many messages a task holds: [[Capacity]], unless a test set [[TestCapacity]]. */
  def capacity: Int = sys.props.get(TestCapacity).fold(Capacity)(_.toInt)

  private def key(producer: Long, clock: Long): Long = producer * 0x9e3779b97f4a7c15L ^ clock
}
