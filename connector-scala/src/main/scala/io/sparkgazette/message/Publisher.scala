package io.sparkgazette.message

import java.io.ByteArrayOutputStream
import java.time.Instant

import scala.collection.mutable

/** The framed ACK message that commits one producer's transaction in `journal`, and its clock.
  * Store it durably before appending it, and append it again after any failure: a repeated ACK
  * is harmless.
  */
final case class AckIntent(journal: String, intent: Array[Byte], clock: Long = 0L) {
  override def toString: String = s"AckIntent($journal, ${intent.length} bytes)"
}

/** Publishes messages as one producer, as Gazette's Publisher does, into per-journal buffers of
  * framed bytes that the caller appends (in order, each journal's bytes in one or more appends).
  *
  * One [[ProducerId]] and one clock serve all journals; every message and every ACK takes its
  * own tick, so ACKs commit everything published before them.
  *
  * @param clock updated from `now` before each message, never moving backwards
  */
final class Publisher(
    val producer: ProducerId = ProducerId.random(),
    clock: MonotonicClock = new MonotonicClock(),
    now: () => Instant = () => Instant.now()
) {
  private val buffers = mutable.LinkedHashMap[String, FramedBytes]()
  private val KeptBuffers = 8
  // Journals written uncommitted since the last ACKs, in first-use order, with a payload to
  // shape their acknowledgement after.
  private val open = mutable.LinkedHashMap[String, (Framing, Array[Byte])]()
  // The clock before the open transaction's first message: an ACK at this clock rolls it back.
  private var txnStart = -1L

  /** Publishes `payload` to `journal` outside any transaction: readers see it at once. */
  def publishCommitted(journal: String, framing: Framing, payload: Array[Byte]): Unit =
    publish(journal, framing, payload, Flags.OutsideTxn)

  /** Publishes `payload` to `journal` within the open transaction: readers see it once the
    * ACK intents built next are appended.
    */
  def publishUncommitted(journal: String, framing: Framing, payload: Array[Byte]): Unit = {
    if (txnStart == -1L) { clock.update(now()); txnStart = clock.current }
    publish(journal, framing, payload, Flags.ContinueTxn)
    if (!open.contains(journal)) open(journal) = (framing, payload)
  }

  /** Framed bytes published to each journal since the last call, in publishing order. */
  def drain(): Seq[(String, Array[Byte])] = {
    val out = buffers.iterator.collect { case (j, b) if b.size > 0 => j -> b.toByteArray }.toList
    buffers.clear()
    out
  }

  /** Bytes published to `journal` and not yet drained. */
  def buffered(journal: String): Int = buffers.get(journal).fold(0)(_.size)

  /** Takes what was published to `journal` and not yet drained. */
  def drain(journal: String): Array[Byte] = buffers.remove(journal).fold(Array.emptyByteArray)(_.toByteArray)

  /** Hands what was published to `journal` and not yet drained to `f` (bytes, offset, length)
    * without copying it, then empties the buffer, which is kept for what comes next: a task
    * drains each journal thousands of times, and buffers of a MiB made anew each time cost the
    * garbage collector more than framing costs.
    */
  def drainTo(journal: String)(f: (Array[Byte], Int, Int) => Unit): Unit = buffers.get(journal).foreach { b =>
    b.drainTo(f)
    // A task writing many journals keeps the buffers of a few, not a MiB or two for each.
    if (b.capacity > FramedBytes.Initial &&
      buffers.valuesIterator.count(_.capacity > FramedBytes.Initial) > KeptBuffers)
      buffers.remove(journal)
  }

  /** ACKs committing the open transaction in every journal it wrote to, each with its own
    * clock tick, in first-use order; the next uncommitted message opens a new transaction.
    */
  def buildAckIntents(): Seq[AckIntent] = {
    val intents = open.toSeq.map { case (journal, (framing, like)) => ack(journal, framing, like, clock.tick()) }
    open.clear()
    txnStart = -1L
    intents
  }

  /** An ACK at `at` in `journal`. Readers take an ACK at or below the last clock they saw the
    * producer commit there as a rollback of whatever it left open after that: at that clock, it
    * abandons a failed attempt's messages.
    */
  def ackAt(journal: String, framing: Framing, like: Array[Byte], at: Long): AckIntent = ack(journal, framing, like, at)

  private def ack(journal: String, framing: Framing, like: Array[Byte], at: Long): AckIntent = {
    val out = new ByteArrayOutputStream(64)
    framing.frameAck(Uuid.build(producer, at, Flags.AckTxn), like, out)
    AckIntent(journal, out.toByteArray, at)
  }

  /** ACKs that roll back the open transaction in every journal it wrote to: their clock
    * precedes all of its messages, so readers discard them. Nothing is rolled back that an
    * earlier ACK committed.
    */
  def buildRollbackIntents(): Seq[AckIntent] = {
    val intents = rollbackIntents()
    open.clear()
    txnStart = -1L
    intents
  }

  /** The intents [[buildRollbackIntents]] would build, leaving the transaction open: kept so
    * that a transaction can still be rolled back after its ACK intents were built.
    */
  def rollbackIntents(): Seq[AckIntent] =
    open.toSeq.map { case (journal, (framing, like)) => ack(journal, framing, like, txnStart) }

  private def publish(journal: String, framing: Framing, payload: Array[Byte], flags: Int): Unit = {
    clock.update(now())
    val out = buffers.getOrElseUpdate(journal, new FramedBytes)
    val mark = out.size
    try framing.frame(payload, Uuid.build(producer, clock.tick(), flags), out)
    catch {
      case e: MessageFormatException =>
        // Keep the buffer to whole messages.
        out.truncate(mark)
        throw e
    }
  }
}

/** A journal's framed bytes, drained in place. */
private final class FramedBytes extends ByteArrayOutputStream(FramedBytes.Initial) {
  def capacity: Int = buf.length

  def drainTo(f: (Array[Byte], Int, Int) => Unit): Unit = {
    if (count > 0) f(buf, 0, count)
    reset()
  }

  def truncate(size: Int): Unit = count = math.min(count, size)
}

private object FramedBytes {
  val Initial: Int = 8 << 10
}
