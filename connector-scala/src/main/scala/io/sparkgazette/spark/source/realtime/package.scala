package io.sparkgazette.spark.source

/** Real-time tasks: every journal of a task read as it is appended, for the whole batch, its rows
  * handed out as Spark's real-time mode asks.
  */
package object realtime
