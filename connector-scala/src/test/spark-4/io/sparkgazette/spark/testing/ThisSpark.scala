package io.sparkgazette.spark.testing

/** What the Spark of this build has, for suites that run on every line. */
object ThisSpark {

  /** Whether a batch write's SQL metrics take what its driver counted. */
  val takesDriverMetrics: Boolean = true // Write.reportDriverMetrics

  val hasRealTimeMode: Boolean = true // Spark 4.1 and newer; the suites run on 4.3

  /** Whether Spark's Jackson refuses over-long names (Jackson 2.16 and newer). */
  val jacksonLimitsNames: Boolean = true
}
