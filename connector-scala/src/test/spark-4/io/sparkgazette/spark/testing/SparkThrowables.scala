package io.sparkgazette.spark.testing

import org.apache.spark.SparkThrowable

/** What the suites ask of an error's condition, by the name Spark 4 gives it. */
object SparkThrowables {
  def condition(t: SparkThrowable): String = t.getCondition

  /** What Spark 4 asks of any SparkThrowable whose condition it does not know: it must answer. */
  def askAsSparkDoes(t: SparkThrowable): Unit = {
    t.getDefaultMessageTemplate
    t.getBreakingChangeInfo
  }
}
