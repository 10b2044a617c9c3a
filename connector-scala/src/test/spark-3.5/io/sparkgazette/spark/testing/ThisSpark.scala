package io.sparkgazette.spark.testing

/** What the Spark of this build has, for suites that run on every line. */
object ThisSpark {
  val hasRealTimeMode: Boolean = false

  /** Whether Spark's Jackson refuses over-long names (Spark 3.5 ships Jackson 2.15). */
  val jacksonLimitsNames: Boolean = false
}
