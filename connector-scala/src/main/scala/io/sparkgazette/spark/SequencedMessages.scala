package io.sparkgazette.spark

/** The sequence clocks (see [[io.sparkgazette.message.Sequencer.sequenceClock]]) of the last
  * committed messages a real-time task's source emitted, newest last, for the task's writer to
  * find each row's: a row reaches the writer before its source reads on (Spark pipelines a
  * task's operators one row at a time), so its message is the last emitted, or close to it.
  * Only the task's thread uses it.
  */
private[spark] final class SequencedMessages(capacity: Int = SequencedMessages.Capacity) {
  private var journals: Array[String] = _
  private var producers, clocks, sequenceClocks: Array[Long] = _
  private var next = 0
  private var count = 0

  /** Records that `journal`'s message at `clock` of `producer` was emitted, at `sequenceClock`. */
  def add(journal: String, producer: Long, clock: Long, sequenceClock: Long): Unit = {
    if (journals == null) {
      journals = new Array[String](capacity)
      producers = new Array[Long](capacity)
      clocks = new Array[Long](capacity)
      sequenceClocks = new Array[Long](capacity)
    }
    journals(next) = journal
    producers(next) = producer
    clocks(next) = clock
    sequenceClocks(next) = sequenceClock
    next = (next + 1) % capacity
    count = math.min(count + 1, capacity)
  }

  /** The sequence clock of the newest message of `producer` at `clock` in `journal` among the
    * last `capacity` emitted; Long.MinValue where there is none.
    */
  def find(journal: String, producer: Long, clock: Long): Long = {
    var i = 0
    while (i < count) {
      val at = Math.floorMod(next - 1 - i, capacity)
      if (producers(at) == producer && clocks(at) == clock && journals(at) == journal) return sequenceClocks(at)
      i += 1
    }
    Long.MinValue
  }
}

private[spark] object SequencedMessages {
  val Capacity = 65536
}
