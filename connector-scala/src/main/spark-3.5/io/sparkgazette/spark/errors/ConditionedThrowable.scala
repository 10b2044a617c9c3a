package io.sparkgazette.spark
package errors

import org.apache.spark.SparkThrowable

/** A [[SparkThrowable]] answering its condition by the name Spark 3.5 asks (4.0 added `getCondition`). */
private[errors] trait ConditionedThrowable extends SparkThrowable {
  protected def condition: String

  override def getErrorClass: String = condition
}
