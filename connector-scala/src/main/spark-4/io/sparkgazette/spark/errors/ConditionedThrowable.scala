package io.sparkgazette.spark
package errors

import org.apache.spark.SparkThrowable

/** A [[SparkThrowable]] answering its condition by both names Spark 4 asks. */
private[errors] trait ConditionedThrowable extends SparkThrowable {
  protected def condition: String

  override def getCondition: String = condition
  // Deprecated since Spark 4.0, and still what callers written for earlier versions ask.
  override def getErrorClass: String = condition
}
