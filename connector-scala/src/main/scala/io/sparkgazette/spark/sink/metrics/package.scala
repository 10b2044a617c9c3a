package io.sparkgazette.spark.sink

/** What the sink counts: its metrics (names, descriptions, Spark's metric classes), a task's
  * counts, and what a stream's progress reports.
  */
package object metrics
