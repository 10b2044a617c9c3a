package io.sparkgazette.spark.sink

/** What a write is given: the sink's options and columns, and where its intents are recorded.
  */
package object config
