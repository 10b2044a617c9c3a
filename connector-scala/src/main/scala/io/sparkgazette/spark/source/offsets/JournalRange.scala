package io.sparkgazette.spark
package source
package offsets

import io.sparkgazette.message.StateTransfer
import org.apache.spark.sql.connector.read.InputPartition

/** A journal's part of a batch: the messages of `journal` that end in `(start, end]`, read from
  * where the state at `start` says the first of them begins. `origin` is where the query began
  * reading the journal with no state (-1 for a batch query, which has none), and `revision` the
  * Etcd revision that created the journal: together they name the states this range may use.
  * `lookAhead` (batch queries, which carry no state past their end): the transactions open at
  * `end` are resolved by reading on, up to this offset (see [[JournalRangeReader]]).
  * `base` (streams) is the state the driver found for it: the one saved at `start`, or else the
  * newest saved between `origin` and `start`, from which the state at `start` is rebuilt.
  * `piece`: a large range of ndjson is read by several tasks, each a [[Piece]].
  */
private[source] final case class JournalRange(journal: String, contentType: String, labels: Map[String, Seq[String]],
    start: Long, end: Long,
    origin: Long = -1L, revision: Long = 0L, lookAhead: Long = -1L, base: Option[StateRef] = None,
    piece: Option[Piece] = None,
    refreshIntervalMs: Long = 0L) {
  def bytes: Long = piece.fold(end)(p => math.min(end, p.until)) - piece.fold(start)(_.from)

  /** Whether this reads the range's first messages, from the state at `start`. */
  def first: Boolean = piece.forall(_.from == start)
}

/** Part of a range split at byte offsets: the messages that begin in `[from, until)` (that end by
  * the range's end). Only lines split soundly: a piece that does not begin at the range's start
  * finds its first message at the first line start at or after `from` ([[io.sparkgazette.message.LineStart]]),
  * and a piece stops at the first message that begins at or after `until`. So every message of
  * the range is read by exactly one piece whatever the offsets, and the piece that reads to the
  * range's end without meeting `until` (the one holding the last message, or the held part of
  * one) knows where the next range resumes, and saves that state.
  *
  * Read committed, a piece but the first carries `before`: what the range's messages before it
  * do to the producers' states (found by a first pass over them, see [[PieceStates]]), so that
  * it is sequenced from the states at its first message, those at the range's start carried
  * through `before`.
  */
private[source] final case class Piece(from: Long, until: Long, before: Option[StateTransfer] = None)

/** One task's work: its journals' ranges, read one after the other, and for a stream the file
  * (relative to the state directory) where it saves the state of each at the range's end.
  */
private[source] final case class JournalTask(ranges: Seq[JournalRange], statesFile: Option[String] = None)
    extends InputPartition
