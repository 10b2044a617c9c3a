package io.sparkgazette.spark
package sink
package realtime

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import scala.collection.mutable

import io.sparkgazette.message.{Flags, ProducerId, Uuid}
import io.sparkgazette.spark.handoff.SequencedMessages

/** The UUIDs a real-time writer gives its rows: each row's producer and clock follow from the
  * input message it came from (its origin: journal and UUID), so that a batch run again after a
  * failure, which reads the same messages again, writes them under the same UUIDs, and
  * read-committed readers drop the second copy (an OUTSIDE_TXN message at or below its
  * producer's last clock is a duplicate, Gazette's `OutsideAlreadyAcked`).
  *
  *  - The producer hashes (query seed, source, origin journal, origin producer, k), where the row
  *    is the k-th the query made from that message: one input message may give several rows
  *    (`explode`), and each takes a producer of its own at the same clock. An input producer
  *    writing several input journals takes a producer per journal, since those are read by
  *    different tasks in no fixed order between them.
  *  - The clock is the origin's sequence clock, as the source gives it (see
  *    [[io.sparkgazette.message.Sequencer.sequenceClock]]): the origin's clock, raised above
  *    the previous committed message's of its producer where a rollback to an older ACK took the
  *    producer's clocks back. It follows from the messages before the origin in its journal
  *    alone, so every run of every batch gives a message the same one, and it grows with each
  *    message a producer commits, so every output producer's clocks grow in the order its rows
  *    are written.
  *
  * A replayed run interleaved with the first one (a zombie task still appending) loses nothing:
  * each copy of a row comes before any later row of either run under its producer. This holds
  * while the query keeps, for every input message, the same rows in the same order (a
  * deterministic, stateless query between source and sink, in one task, which the writer
  * checks).
  *
  * An operator that puts rows out of their messages' order would have a row written at or below
  * a clock its producer already has in the journal, and readers drop it: a row of an earlier
  * message after a later one's of the same input producer, or a message's rows resumed after
  * another message's (whose k would start again at 0). Such rows get no UUID from their origin.
  * The writer tracks each output producer's last clock, so rows reordered across input producers
  * or journals, which take other producers, keep theirs.
  */
private[realtime] final class OriginUuids(seed: Long) {
  // The number of the message the last row was made from, and how many rows it gave: rows of
  // one message come one after the other.
  private var cursor = -1L
  private var rows = 0
  // Whether rows come later than their message's emission (an operator between the source and
  // the sink holds rows back): then a row's message is not always the last one emitted.
  private var heldBack = false
  // The last clock given under each output producer: a row must come above it.
  private val lastClocks = mutable.LongMap[Long]()
  // Whether the rows of the last row's message came out of order: so do the rest of them.
  private var outOfOrder = false

  /** The UUID of the next row made from the message `origin` of `journal`, read by `source`,
    * whose source emitted the `messages`; Left with why the row gets none (its input is then
    * delivered at least once).
    */
  def next(journal: String, origin: UUID, source: String,
      messages: SequencedMessages): Either[OriginUuids.Unsequenced, UUID] = {
    val (producer, clock) = (Uuid.producer(origin).value, Uuid.clock(origin))
    if (clock == 0L) return Left(OriginUuids.NoClock)
    val newest = messages.newest
    val copies = messages.find(journal, producer, clock).reverse
    if (copies.isEmpty) {
      // Emitted (the source read it) but no longer held: rows come later than their messages.
      heldBack = true
      return Left(OriginUuids.NotFound)
    }
    // Rows keep the order of their messages: a row continues the last row's message, or comes
    // from a later one. Where the rows may have reached past the window, an earlier copy of a
    // message committed again after a rollback may have left it: which copy the row comes from is
    // not told. Spark's operators hand a row on before the source reads on, so where rows are not
    // held back the newest message is the row's.
    val certain = !heldBack && copies.last == newest
    if (!certain && math.max(cursor, 0L) < messages.oldest && messages.recommits(copies.head))
      return Left(OriginUuids.CopyPassed)
    val at = copies match {
      case only :: Nil => only
      case _ =>
        // The UUID was committed more than once lately (after a rollback to an older ACK): a copy
        // emitted since the last row's is the row's message where rows are not held back.
        val later = copies.filter(_ > cursor)
        if (copies.contains(cursor)) {
          if (later.isEmpty) cursor
          else if (!heldBack && later == List(newest)) newest
          else return Left(OriginUuids.Ambiguous)
        } else later.headOption.getOrElse(return Left(OriginUuids.Ambiguous))
    }
    if (at != newest) heldBack = true
    if (at != cursor) { rows = 0; outOfOrder = false }
    val k = rows
    cursor = at
    rows = k + 1
    val (out, sequenceClock) = (OriginUuids.producer(seed, source, journal, producer, k), messages.sequenceClock(at))
    if (outOfOrder || lastClocks.get(out.value).exists(_ >= sequenceClock)) {
      outOfOrder = true
      return Left(OriginUuids.OutOfOrder)
    }
    lastClocks(out.value) = sequenceClock
    Right(Uuid.build(out, sequenceClock, Flags.OutsideTxn))
  }
}

private[realtime] object OriginUuids {

  /** Why a row's origin gives it no UUID. */
  sealed trait Unsequenced

  /** The origin has no clock: Gazette reads such a message outside any transaction. */
  case object NoClock extends Unsequenced

  /** The source did not emit the origin lately (an operator between them holds rows back). */
  case object NotFound extends Unsequenced

  /** A row held back, of a message whose UUID was committed more than once lately: which copy
    * it comes from is not told.
    */
  case object Ambiguous extends Unsequenced

  /** A row held back past the messages the source emitted last, of a message committed again
    * after a rollback: an earlier copy, no longer held, may be the row's message.
    */
  case object CopyPassed extends Unsequenced

  /** A row that would come at or below a clock its output producer has already: an operator put
    * it after a later message's row, or resumed its message's rows after another message's.
    */
  case object OutOfOrder extends Unsequenced

  /** The output producer of the `k`-th row made from messages of `producer` in `journal`, as
    * read by `source` (a union of two sources reading one journal writes both's rows).
    */
  def producer(seed: Long, source: String, journal: String, producer: Long, k: Int): ProducerId = {
    var h = mix(seed ^ fnv(source))
    h = mix(h ^ fnv(journal))
    h = mix(h ^ producer)
    h = mix(h ^ k.toLong)
    // Gazette's rule for random producers: the multicast bit set, so never a real MAC.
    ProducerId((h & 0xffffffffffffL) | (1L << 40))
  }

  private def fnv(s: String): Long =
    s.getBytes(UTF_8).foldLeft(0xcbf29ce484222325L)((h, b) => (h ^ (b & 0xff)) * 0x100000001b3L)

  // SplitMix64's finalizer: every input bit moves every output bit.
  private def mix(x: Long): Long = {
    var z = x + 0x9e3779b97f4a7c15L
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL
    z ^ (z >>> 31)
  }
}
