package io.sparkgazette.spark.source

/** Messages into rows: the connector's columns, and with a schema each payload parsed by Spark's
  * own JSON and CSV parsers or the protobuf decoder.
  */
package object rows
