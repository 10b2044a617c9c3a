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
  *  - The clock is the origin's clock, so it grows as its input producer's messages do in their
  *    journal, and reads as the time the input was published.
  *  - The producer hashes (query seed, source, origin journal, origin producer, k), where the row is
  *    the k-th the query made from that message: one input message may give several rows
  *    (`explode`), and each takes a producer of its own at the same clock. An input producer
  *    writing several input journals takes a producer per journal, since those are read by
  *    different tasks in no fixed order between them.
  *
  * So every output producer's clocks grow in the order the rows are written, and a replayed run
  * interleaved with the first one (a zombie task still appending) loses nothing: each copy of
  * a row comes before any later row of either run under its producer. This holds while the
  * query keeps, for every input message, the same rows in the same order (a deterministic,
  * stateless query between source and sink, in one task, which the writer checks); a row whose
  * origin comes before one already written for its producer gets no UUID from it.
  */
private[spark] final class OriginUuids(seed: Long) {
  // Per (origin journal, origin producer): the last origin clock and how many rows it gave; the
  // least recently seen forgotten past a bound (UUIDs that are not Gazette's would make one
  // producer a message). Only the entry of the message being written is needed for k.
  private val last = new java.util.LinkedHashMap[(String, Long), (Long, Int)](256, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[(String, Long), (Long, Int)]): Boolean =
      size() > OriginUuids.Remembered
  }

  /** The UUID of the next row made from the message `origin` of `journal`: `Left(())` where
    * the origin has no clock (Gazette reads such a message outside any transaction, at least
    * once), `Right(None)` where it comes before a row already given one.
    */
  def next(journal: String, origin: UUID, source: String = ""): Either[Unit, Option[UUID]] = {
    val (producer, clock) = (Uuid.producer(origin).value, Uuid.clock(origin))
    if (clock == 0L) return Left(())
    val key = (journal, producer)
    val k = Option(last.get(key)) match {
      case Some((c, n)) if c == clock => n
      case Some((c, _)) if c > clock => return Right(None)
      case _ => 0
    }
    last.put(key, (clock, k + 1))
    Right(Some(Uuid.build(OriginUuids.producer(seed, source, journal, producer, k), clock, Flags.OutsideTxn)))
  }
}

private[spark] object OriginUuids {
  private val Remembered = 65536

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
