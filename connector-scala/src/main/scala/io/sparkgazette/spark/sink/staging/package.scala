package io.sparkgazette.spark.sink

/** Staged runs: where a write stages (`WriteStaging`) and from what size, a task's run written to
  * files (`StagedRunWriter`), and the driver publishing and forgetting them (`StagedRuns`).
  */
package object staging
