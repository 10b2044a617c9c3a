package io.sparkgazette.spark
package errors

import scala.jdk.CollectionConverters._

/** An error the connector raises to users, protobuf decoding's included: a stable condition to
  * match on, its SQLSTATE, and the named parts of the message (option, value, journal, offset,
  * ...). The message reads as Spark's own, `[CONDITION] text`, its text the condition's wording
  * in `error-conditions.json` filled from those parts (see [[ErrorConditions]]).
  *
  * Each error stays a subclass of the JDK exception the connector raised before it had
  * conditions: code catching `IllegalArgumentException` still does, and PySpark still converts
  * it to its own `IllegalArgumentException`, whose `getCondition()` then answers ours.
  *
  * To match any of the connector's errors, match `GazetteThrowable`, or
  * `org.apache.spark.SparkThrowable` and its condition's `GAZETTE_` prefix.
  */
sealed trait GazetteThrowable extends ConditionedThrowable {
  protected def condition: String
  protected def sqlState: String
  protected def parameters: Map[String, String]

  override def getSqlState: String = sqlState
  override def getMessageParameters: java.util.Map[String, String] = parameters.asJava
  override def isInternalError: Boolean = condition == ErrorConditions.Internal
}

final class GazetteIllegalArgumentException private[errors] (
    protected val condition: String,
    protected val sqlState: String,
    protected val parameters: Map[String, String],
    message: String,
    cause: Throwable
) extends IllegalArgumentException(s"[$condition] $message", cause) with GazetteThrowable

private[spark] object GazetteIllegalArgumentException {

  /** The error worded by `key` (a condition, or `CONDITION.VARIANT`) in `error-conditions.json`. */
  def apply(key: String, parameters: Map[String, String], cause: Throwable = null): GazetteIllegalArgumentException = {
    val m = ErrorConditions.message(key, parameters)
    new GazetteIllegalArgumentException(m.condition, m.sqlState, parameters, m.text, cause)
  }
}

final class GazetteIllegalStateException private[errors] (
    protected val condition: String,
    protected val sqlState: String,
    protected val parameters: Map[String, String],
    message: String,
    cause: Throwable
) extends IllegalStateException(s"[$condition] $message", cause) with GazetteThrowable

private[spark] object GazetteIllegalStateException {

  /** The error worded by `key` (a condition, or `CONDITION.VARIANT`) in `error-conditions.json`. */
  def apply(key: String, parameters: Map[String, String], cause: Throwable = null): GazetteIllegalStateException = {
    val m = ErrorConditions.message(key, parameters)
    new GazetteIllegalStateException(m.condition, m.sqlState, parameters, m.text, cause)
  }
}

final class GazetteUnsupportedOperationException private[errors] (
    protected val condition: String,
    protected val sqlState: String,
    protected val parameters: Map[String, String],
    message: String,
    cause: Throwable
) extends UnsupportedOperationException(s"[$condition] $message", cause) with GazetteThrowable

private[errors] object GazetteUnsupportedOperationException {

  /** The error worded by `key` (a condition, or `CONDITION.VARIANT`) in `error-conditions.json`. */
  def apply(key: String, parameters: Map[String, String], cause: Throwable = null)
      : GazetteUnsupportedOperationException = {
    val m = ErrorConditions.message(key, parameters)
    new GazetteUnsupportedOperationException(m.condition, m.sqlState, parameters, m.text, cause)
  }
}
