package io.sparkgazette.spark.source

/** Tasks reading journal ranges: the range reader (sequenced from the state at its start), the
  * task's several ranges, the first passes of split ranges, and the task metrics.
  */
package object reading
