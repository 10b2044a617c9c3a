package io.sparkgazette.spark.sink

/** Rows into messages: each row's journal and payload, as JSON, CSV or the bytes of `value`.
  */
package object rows
