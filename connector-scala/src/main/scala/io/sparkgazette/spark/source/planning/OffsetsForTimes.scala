package io.sparkgazette.spark
package source
package planning

import java.time.Instant

import io.sparkgazette.client.GazetteClient
import io.sparkgazette.message.{Clock, Envelope, Framing, JournalBytes, MalformedMessage, MessageIterator, RawMessage}
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.options.GazetteOptions
import io.sparkgazette.spark.source.offsets.{NoMessageAtTime, OffsetSpec, SourceOptions}
import org.slf4j.LoggerFactory

/** Where a journal reaches a time: the offset of the first message, in journal order, whose UUID
  * clock is at or after it (options `startingTimestamp`, `startingOffsetsByTimestamp`,
  * `endingTimestamp`, `endingOffsetsByTimestamp`), found as Kafka's `offsetsForTimes` finds it.
  *
  * Producers' clocks are not ordered across producers, so a journal's clocks are not sorted and no
  * search can rely on them. What is ordered is persistence: a fragment's `mod_time` is when the
  * fragment store received it, after every byte in it was appended, and so after its messages
  * were published, by a clock that runs at most [[ClockSlack]] ahead of the store's. A persisted
  * fragment whose `mod_time` (whole seconds, rounded down) plus a second and that slack is at or
  * before the time holds no message published at or after it. The search skips the leading run of
  * such fragments (listed by ListFragments, in offset order) and frames the journal from the first
  * fragment that may hold one, up to the write head, stopping at the first message whose clock is
  * at or after the time: that message's first byte, a message boundary, is the answer.
  *
  * So the guarantee is: every message before the answer, from the search's start on, was published
  * before the time; messages before the search's start were published before the time if
  * producers' clocks ran at most [[ClockSlack]] ahead of the fragment store's; messages after the
  * answer are read whatever their clocks (a producer whose clock lags, or a transaction appended
  * long after it was published, can put earlier clocks there). Messages without a UUID have no
  * time: they are never the answer, and are read when they follow it.
  */
private[source] object OffsetsForTimes {
  private val log = LoggerFactory.getLogger(getClass)

  /** How far producers' clocks may run ahead of the fragment store's, for a fragment to be skipped. */
  val ClockSlack: Long = 60000L

  /** A fragment as ListFragments lists it: bytes `[begin, end)`, persisted at `modTime` (Unix
    * seconds; 0 while it is only on the brokers' disks).
    */
  final case class FragmentTime(begin: Long, end: Long, modTime: Long)

  /** What a search found: the first message at or after the time, or none up to the write head. */
  sealed trait Found
  final case class AtOffset(offset: Long) extends Found
  final case class NoneBefore(writeHead: Long) extends Found

  /** The clock of a message published at `epochMillis`, with no ticks: a message is at or after
    * the time when its clock is at least this.
    */
  def clockAt(epochMillis: Long): Long = Clock.fromInstant(Instant.ofEpochMilli(epochMillis))

  /** Where a search for messages published at or after `epochMillis` starts: the first byte of
    * the first fragment, in offset order, that is not persisted or whose `mod_time` is not
    * `slackMillis` and a second before the time; the end of the last fragment if every one is;
    * None when there are no fragments.
    */
  def searchFrom(fragments: Seq[FragmentTime], epochMillis: Long, slackMillis: Long = ClockSlack): Option[Long] = {
    val sorted = fragments.sortBy(f => (f.begin, f.end))
    def old(f: FragmentTime) = f.modTime > 0 && (f.modTime + 1) * 1000L + slackMillis <= epochMillis
    sorted.find(!old(_)).map(_.begin).orElse(sorted.lastOption.map(_.end))
  }

  /** The first byte of the first message with a UUID whose clock is at least `clock`; malformed
    * bytes and messages without a UUID are passed over.
    */
  def firstAtOrAfter(messages: Iterator[Either[MalformedMessage, Envelope[RawMessage]]], clock: Long): Option[Long] =
    messages.collectFirst { case Right(env) if env.clock != 0 && env.clock >= clock => env.begin }

  /** `spec` with its times replaced by the offsets they resolve to in `journals` (an [[OffsetSpec.Specific]]
    * whose left-out journals start at their earliest offset, or end at their write head, as the
    * options' JSON does); any other spec as it is. A journal with no message at or after its time
    * ends at its write head, and starts there with `startingOffsetsByTimestampStrategy=latest`;
    * otherwise its start is an error. Suspended journals cannot be searched: naming one is an error.
    */
  def resolve(spec: OffsetSpec, journals: Map[String, JournalInfo], directory: JournalDirectory, options: SourceOptions,
      starting: Boolean): OffsetSpec = {
    import GazetteOptions._
    val (times, option) = spec match {
      case OffsetSpec.AtTime(t) =>
        (journals.keys.map(_ -> t).toMap, if (starting) StartingTimestamp else EndingTimestamp)
      case OffsetSpec.AtTimes(ts) =>
        val option = if (starting) StartingOffsetsByTimestamp else EndingOffsetsByTimestamp
        ts.keys.toSeq.sorted.find(j => !journals.contains(j)).foreach(j =>
          throw GazetteErrors.unknownJournal(j, option))
        (ts, option)
      case other => return other
    }
    times.keys.toSeq.sorted.find(journals(_).suspended).foreach(j => throw GazetteErrors.suspendedAtTime(j, option))
    val found = directory.offsetsForTimes(times.map { case (j, t) => journals(j) -> t }, options)
    OffsetSpec.Specific(found.map {
      case (j, AtOffset(o)) => j -> o
      case (j, NoneBefore(head)) if !starting || options.noMessageAtStart == NoMessageAtTime.Latest => j -> head
      case (j, NoneBefore(head)) => throw GazetteErrors.noMessageAtTime(j, times(j), head, option)
    })
  }

  /** Finds where `journal` (framed by `framing`) reaches `epochMillis`, asking `client`. */
  def find(client: GazetteClient, journal: String, framing: Framing, epochMillis: Long, maxMessageBytes: Int,
      slackMillis: Long = ClockSlack): Found = {
    val head = client.writeHead(journal)
    val fragments = client.listFragments(journal).flatMap(_.spec).map(f => FragmentTime(f.begin, f.end, f.modTime))
    val from = client.readableFrom(journal, searchFrom(fragments, epochMillis, slackMillis).getOrElse(0L))
    val found = if (from >= head) NoneBefore(head)
    else {
      val reader = client.read(journal, from, endOffset = head)
      try {
        val chunks = reader.map(c => JournalBytes(c.offset, c.content.asReadOnlyByteBuffer()))
        val messages = new MessageIterator(journal, framing, chunks, holdTail = true, maxMessageBytes = maxMessageBytes)
        firstAtOrAfter(messages, clockAt(epochMillis)).map(AtOffset(_)).getOrElse {
          // A read that ended early (a gap not yet readable, a lagging replica) proves nothing
          // about the bytes it did not reach.
          if (reader.offset < head)
            throw GazetteErrors.timeSearchCutShort(journal, epochMillis, reader.offset, head)
          NoneBefore(head)
        }
      } finally reader.close()
    }
    log.info(s"journal $journal: ${found match {
        case AtOffset(o) => s"the first message at or after ${Instant.ofEpochMilli(epochMillis)} begins at offset $o"
        case NoneBefore(h) => s"no message at or after ${Instant.ofEpochMilli(epochMillis)} up to the write head $h"
      }} (searched from offset $from of ${fragments.size} fragments)")
    found
  }
}
