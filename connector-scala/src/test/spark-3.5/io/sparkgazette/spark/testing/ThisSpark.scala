package io.sparkgazette.spark.testing

/** What the Spark of this build has, for suites that run on every line. */
object ThisSpark {

  /** Whether a batch write's SQL metrics take what its driver counted. */
  val takesDriverMetrics: Boolean = false // no Write.reportDriverMetrics

  val hasRealTimeMode: Boolean = false

  /** Whether Spark's Jackson refuses over-long names (Spark 3.5 ships Jackson 2.15). */
  val jacksonLimitsNames: Boolean = false
}
