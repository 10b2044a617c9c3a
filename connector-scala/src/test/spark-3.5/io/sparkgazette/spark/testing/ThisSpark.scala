package io.sparkgazette.spark.testing

/** What the Spark of this build has, for suites that run on every line. */
object ThisSpark {
  val hasRealTimeMode: Boolean = false
}
