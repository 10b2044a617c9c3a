package io.sparkgazette.spark

/** The connector's options: the reference (`options.json`: name, side, the queries that take it,
  * default, doc), their names, and the parsing the source and the sink share. The sides' own
  * parsing is theirs (`source.offsets.SourceOptions`, `sink.config.SinkOptions`).
  */
package object options
