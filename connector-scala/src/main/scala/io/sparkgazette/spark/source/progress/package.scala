package io.sparkgazette.spark.source

/** What the driver reports of a query's progress in time: how long ago the messages not yet
  * read were written (time behind the journals' heads), and how old the newest message read is.
  */
package object progress
