package io.sparkgazette

/** The DataSource V2 connector, registered as `gazette`: a micro-batch and batch source whose
  * offsets are per-journal byte offsets and whose executors sequence messages exactly once,
  * and (see the sink) a transactional writer.
  *
  * Options are parsed and validated once, in [[spark.options.GazetteOptions]]; every user-facing error
  * is built in [[spark.errors.GazetteErrors]] (or protobuf's), worded in `error-conditions.json`.
  */
package object spark
