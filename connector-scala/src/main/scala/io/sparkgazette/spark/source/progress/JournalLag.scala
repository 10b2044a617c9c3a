package io.sparkgazette.spark
package source
package progress

import scala.util.control.NonFatal

import io.sparkgazette.client.GazetteClient
import io.sparkgazette.message.{Clock, Flags, Framing, JournalBytes, LineStart, MessageIterator}

/** How far behind a journal's head a reader is in time, asked of the brokers on the driver.
  *
  * A reader at `offset` below the head is behind by the age of the oldest message it has not read:
  * now minus the write time of the first message at or after `offset`. That time is its UUID's
  * clock, the producer's wall clock when it published the message. Acknowledgements (ACK_TXN) are
  * passed over: a producer recovering from its checkpoint writes its acknowledgements again with
  * their original clocks (so do rollbacks), and such an old clock says nothing of when the bytes
  * were written; behind acknowledgements only, the fragment's time is used. A message without a UUID (or
  * one past what a first look frames) is timed by the fragment holding it once a store persisted
  * it: the fragment's `mod_time` (whole seconds, rounded down) is after every byte in it was
  * written, so the age it gives is a lower bound, up to a second short. A message only in a
  * broker's spool, without a UUID, has no known time.
  *
  * Ages are clamped at zero: a producer whose clock runs ahead of the driver's publishes messages
  * that seem to come from the future.
  */
private[spark] object JournalLag {

  /** How much of a journal a first look reads for its first message. */
  val FirstLookBytes: Long = 64L << 10

  /** Milliseconds the reader at `offset` is behind `head` in time: 0 when `offset >= head`;
    * otherwise now (`nowMillis`) minus the write time of the first message at or after `offset`;
    * None when unknown. The journal's framing comes from its `content-type` label, with the
    * default UUID locations.
    */
  def timeBehind(client: GazetteClient, journal: String, offset: Long, head: Long, nowMillis: Long): Option[Long] =
    if (offset >= head) Some(0L)
    else {
      val contentType = client.list(s"name=$journal").headOption.flatMap(_.spec).flatMap(
        _.labels).toSeq.flatMap(_.labels).find(_.name == "content-type").map(_.value).getOrElse("")
      timeBehind(client, journal, Framing.forContentType(contentType).toOption, offset, head, nowMillis)
    }

  /** [[timeBehind]] of a journal framed by `framing` (None: timed by its fragments only). */
  def timeBehind(client: GazetteClient, journal: String, framing: Option[Framing], offset: Long, head: Long,
      nowMillis: Long): Option[Long] =
    if (offset >= head) Some(0L)
    else writtenBy(client, journal, framing, offset, head).map(ageMs(nowMillis, _))

  /** `nowMillis` minus `writtenAt`, never below zero (clocks of producers and driver disagree). */
  def ageMs(nowMillis: Long, writtenAt: Long): Long = math.max(0L, nowMillis - writtenAt)

  /** When the first message at or after `offset` (below `head`) but an acknowledgement was
    * written, in epoch milliseconds: its UUID's clock, else the latest time its persisted fragment
    * allows; None when neither tells.
    */
  def writtenBy(client: GazetteClient, journal: String, framing: Option[Framing], offset: Long, head: Long,
      maxMessageBytes: Int = 4 << 20): Option[Long] = {
    val first = framing.flatMap { f =>
      firstMessage(client, journal, f, offset, math.min(head, offset + FirstLookBytes)).orElse(
        if (head - offset <= FirstLookBytes) None
        else firstMessage(client, journal, f, offset, math.min(head, offset + maxMessageBytes)))
    }
    first match {
      case Some((_, clock)) if clock != 0 => Some(clockMillis(clock))
      case found => persistedBy(fragmentTimes(client, journal), found.fold(offset)(_._1))
    }
  }

  /** The instant a UUID clock was taken, in epoch milliseconds. */
  def clockMillis(clock: Long): Long = Clock.toInstant(clock).toEpochMilli

  /** A fragment as ListFragments lists it: bytes `[begin, end)`, persisted at `modTime` (Unix
    * seconds; 0 while it is only on the brokers' disks).
    */
  final case class FragmentTime(begin: Long, end: Long, modTime: Long)

  /** The latest time, in epoch milliseconds, the byte at `offset` can have been written, as the
    * earliest persisted fragment holding it tells: a second past its `mod_time`, which is rounded
    * down; None where no persisted fragment holds it.
    */
  def persistedBy(fragments: Seq[FragmentTime], offset: Long): Option[Long] =
    fragments.filter(f => f.modTime > 0 && f.begin <= offset && offset < f.end).map(f => (f.modTime + 1) * 1000L)
      .reduceOption(_ min _)

  private def fragmentTimes(client: GazetteClient, journal: String): Seq[FragmentTime] =
    client.listFragments(journal).flatMap(_.spec).map(f => FragmentTime(f.begin, f.end, f.modTime))

  // The first message but an acknowledgement framed in [offset, until): where it begins and its
  // clock (0: no UUID).
  private def firstMessage(client: GazetteClient, journal: String, framing: Framing, offset: Long,
      until: Long): Option[(Long, Long)] = {
    // A reader's offset may be inside a message (a capped batch ends anywhere). Text framings look
    // from the first line start at or after it, as a piece of a split range is read: CSV takes its
    // width from the first record it parses, so a partial one would make every record malformed.
    // A fixed framing passes over what precedes the first message framed whole, as malformed.
    val fromLine = offset > 0 && framing.contentType != Framing.ProtobufFixed
    val reader = client.read(journal, if (fromLine) offset - 1 else offset, endOffset = until)
    try {
      val bytes = reader.map(c => JournalBytes(c.offset, c.content.asReadOnlyByteBuffer()))
      val chunks = if (fromLine) new LineStart(offset, bytes) else bytes
      new MessageIterator(journal, framing, chunks, holdTail = true, payloads = false)
        .collectFirst { case Right(env) if env.clock == 0 || env.flags != Flags.AckTxn => (env.begin, env.clock) }
    } finally
      try reader.close()
      catch { case NonFatal(_) => }
  }
}
