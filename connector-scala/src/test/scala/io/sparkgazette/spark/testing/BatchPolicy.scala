package io.sparkgazette.spark.testing

/** How a test's foreachBatch consumes a micro-batch: read it whole, skip it, or read a few rows. */
sealed trait BatchPolicy

object BatchPolicy {
  case object ReadAll extends BatchPolicy
  case object Skip extends BatchPolicy
  final case class Limit(n: Int) extends BatchPolicy
}
