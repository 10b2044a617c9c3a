package io.sparkgazette.message

/** A message read from `journal` at byte offsets `[begin, end)`, with what its UUID says.
  * A message without a UUID has `clock` 0: it is outside any transaction.
  */
final case class Envelope[+M](
    journal: String,
    begin: Long,
    end: Long,
    producer: ProducerId,
    clock: Long,
    flags: Int,
    message: M
)

/** Where a producer's sequence stands in a journal: the clock of its last acknowledged message,
  * and the offset where its open transaction began (-1 if none). Saved with a reader's offsets,
  * it lets a restored [[Sequencer]] emit exactly what an uninterrupted one would.
  *
  * `sequenceClock`, where it is above `lastAck`, is the sequence clock of the producer's last
  * committed message (see [[Sequencer.sequenceClock]]): a rollback to an older ACK lowers
  * `lastAck` below what was committed before it. `Long.MinValue` where it is `lastAck`.
  */
final case class ProducerState(journal: String, producer: ProducerId, lastAck: Long, begin: Long,
    sequenceClock: Long = Long.MinValue)

/** How [[Sequencer.queue]] classified a message. */
sealed abstract class QueueOutcome(val commits: Boolean)

object QueueOutcome {

  /** A message outside any transaction, committed at once. */
  case object OutsideCommit extends QueueOutcome(true)

  /** A re-sent OUTSIDE_TXN message already seen. */
  case object OutsideAlreadyAcked extends QueueOutcome(false)

  /** A CONTINUE_TXN message of a transaction already acknowledged. */
  case object ContinueAlreadyAcked extends QueueOutcome(false)

  /** A CONTINUE_TXN message already seen within the open transaction. */
  case object ContinueTxnClockLarger extends QueueOutcome(false)

  /** The first CONTINUE_TXN message of a transaction. */
  case object ContinueBeginSpan extends QueueOutcome(false)

  /** A further CONTINUE_TXN message of an open transaction. */
  case object ContinueExtendSpan extends QueueOutcome(false)

  /** An ACK whose clock is not beyond the last acknowledged one: the open transaction is discarded. */
  case object AckRollback extends QueueOutcome(false)

  /** An ACK with no open transaction: only the ACK itself is emitted. */
  case object AckEmpty extends QueueOutcome(true)

  /** An ACK whose transaction began before what the ring holds: replay it first. */
  case object AckCommitReplay extends QueueOutcome(true)

  /** An ACK whose whole transaction is in the ring. */
  case object AckCommitRing extends QueueOutcome(true)
}
