package io.sparkgazette.spark
package source
package offsets

/** Where a read starts or ends in each journal. */
private[source] sealed trait OffsetSpec

private[source] object OffsetSpec {
  case object Earliest extends OffsetSpec
  case object Latest extends OffsetSpec

  /** Explicit byte offsets; [[EarliestOffset]] and [[LatestOffset]] stand for either end. */
  final case class Specific(offsets: Map[String, Long]) extends OffsetSpec

  /** In every journal, the first message published at or after `epochMillis` (see [[OffsetsForTimes]]). */
  final case class AtTime(epochMillis: Long) extends OffsetSpec

  /** The same, with a time per journal; journals left out start at their earliest offset, or end at their latest. */
  final case class AtTimes(epochMillis: Map[String, Long]) extends OffsetSpec

  val EarliestOffset: Long = -2L
  val LatestOffset: Long = -1L
}
