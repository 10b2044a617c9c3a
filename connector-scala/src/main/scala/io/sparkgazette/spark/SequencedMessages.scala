package io.sparkgazette.spark

/** The sequence clocks (see [[io.sparkgazette.message.Sequencer.sequenceClock]]) of the last
  * committed messages a real-time task's source emitted, numbered in the order it emitted them,
  * for the task's writer to find each row's (see [[sink.realtime.OriginUuids]]). Only the task's
  * thread uses it.
  */
private[spark] final class SequencedMessages(capacity: Int = SequencedMessages.Capacity) {
  private var journals: Array[String] = _
  private var producers, clocks, sequenceClocks: Array[Long] = _
  private var added = 0L

  /** Records that `journal`'s message at `clock` of `producer` was emitted, at `sequenceClock`. */
  def add(journal: String, producer: Long, clock: Long, sequenceClock: Long): Unit = {
    if (journals == null) {
      journals = new Array[String](capacity)
      producers = new Array[Long](capacity)
      clocks = new Array[Long](capacity)
      sequenceClocks = new Array[Long](capacity)
    }
    val at = (added % capacity).toInt
    journals(at) = journal
    producers(at) = producer
    clocks(at) = clock
    sequenceClocks(at) = sequenceClock
    added += 1
  }

  /** The number of the message emitted last (-1: none). */
  def newest: Long = added - 1

  /** The number of the oldest message still held. */
  def oldest: Long = math.max(0L, added - capacity)

  /** Whether message `n`, still held, is `journal`'s at `clock` of `producer`. */
  def is(n: Long, journal: String, producer: Long, clock: Long): Boolean = n >= oldest && n <= newest && {
    val at = (n % capacity).toInt
    producers(at) == producer && clocks(at) == clock && journals(at) == journal
  }

  /** The first message from number `from` on that is `journal`'s at `clock` of `producer`; -1
    * where none is, or where messages from `from` on are no longer held.
    */
  def first(from: Long, journal: String, producer: Long, clock: Long): Long =
    if (from < oldest) -1L
    else {
      var n = from
      while (n <= newest && !is(n, journal, producer, clock)) n += 1
      if (n <= newest) n else -1L
    }

  /** The sequence clock of message `n`, still held. */
  def sequenceClock(n: Long): Long = sequenceClocks((n % capacity).toInt)
}

private[spark] object SequencedMessages {
  val Capacity = 16384
}
