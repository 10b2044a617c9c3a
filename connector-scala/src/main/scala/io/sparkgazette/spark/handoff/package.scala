package io.sparkgazette.spark

/** The hand-off between a real-time source and a real-time sink running in one task, the only
  * place they meet: the source publishes, with [[handoff.RealTimeReads.register]], which journals
  * the task reads and the [[handoff.SequencedMessages]] it emitted; the sink consumes them with
  * [[handoff.RealTimeReads.of]] to derive each row's UUID from its origin. Spark gives a task's
  * reader and writer no channel of their own, so the hand-off is kept per JVM, by task attempt.
  * Neither `source` nor `sink` uses the other.
  */
package object handoff
