package io.sparkgazette.spark.sink

/** What a write is given: the sink's options and columns, where its intents are recorded and where
  * its large runs may be staged.
  */
package object config
