package io.sparkgazette.spark.testing

import org.apache.spark.SparkThrowable

/** What the suites ask of an error's condition, by the name Spark 3.5 gives it. */
object SparkThrowables {
  def condition(t: SparkThrowable): String = t.getErrorClass

  /** What Spark 3.5 asks of any SparkThrowable: it must answer. */
  def askAsSparkDoes(t: SparkThrowable): Unit = t.getMessageParameters
}
