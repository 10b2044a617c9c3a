package io.sparkgazette.spark
package sink
package realtime

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import io.sparkgazette.message.{Flags, ProducerId, Uuid}

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
  *  - The clock is the origin's clock, raised to one above the clock of the producer's previous
  *    row where it is not above it: the clocks of one producer's committed messages go back
  *    after a rollback to an older ACK (its messages committed since are committed again, or for
  *    the first time, below clocks already committed), and a row at or below its producer's
  *    last clock would be dropped by readers. So every output producer's clocks grow in the order
  *    its rows are written, and read as the time their input was published.
  *
  * Where the clock stood before the task's first row of a producer comes from the source, which
  * keeps each producer's sequence clock in its offsets (see [[RealTimeReads]]). A replayed run
  * interleaved with the first one (a zombie task still appending) loses nothing: each copy of a
  * row comes before any later row of either run under its producer. This holds while the query
  * keeps, for every input message, the same rows in the same order (a deterministic, stateless
  * query between source and sink, in one task, which the writer checks).
  */
private[spark] final class OriginUuids(seed: Long) {
  // Per (origin journal, origin producer): the last origin clock, the clock its rows were given
  // and how many rows it gave. The least recently seen are forgotten past a bound (UUIDs that are
  // not Gazette's would make one producer a message), and a producer seen again after that takes
  // up above every clock forgotten in its journal.
  private val last = new java.util.LinkedHashMap[(String, Long), OriginUuids.Last](256, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[(String, Long), OriginUuids.Last]): Boolean =
      if (size() <= OriginUuids.Remembered) false
      else {
        forgotten(e.getKey._1) = math.max(forgotten.getOrElse(e.getKey._1, Long.MinValue), e.getValue.out)
        true
      }
  }
  private val forgotten = scala.collection.mutable.Map[String, Long]()

  /** The UUID of the next row made from the message `origin` of `journal`, read by `source`
    * with its producer's sequence clock at `startClock` (Long.MinValue: none) when the task
    * began; None where the origin has no clock (Gazette reads such a message outside any
    * transaction, at least once).
    */
  def next(journal: String, origin: UUID, source: String, startClock: Long => Long): Option[UUID] = {
    val (producer, clock) = (Uuid.producer(origin).value, Uuid.clock(origin))
    if (clock == 0L) return None
    val key = (journal, producer)
    val prior = Option(last.get(key)).getOrElse(
      OriginUuids.Last(0L, math.max(startClock(producer), forgotten.getOrElse(journal, Long.MinValue)), 0))
    val now =
      if (prior.rows > 0 && prior.in == clock) prior.copy(rows = prior.rows + 1)
      else OriginUuids.Last(clock, if (clock > prior.out) clock else prior.out + 1, 1)
    last.put(key, now)
    Some(Uuid.build(OriginUuids.producer(seed, source, journal, producer, now.rows - 1), now.out, Flags.OutsideTxn))
  }
}

private[spark] object OriginUuids {
  private val Remembered = 65536

  private final case class Last(in: Long, out: Long, rows: Int)

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
