package io.sparkgazette.spark
package errors

import scala.jdk.CollectionConverters._

/** An error the connector raises to users, made by [[GazetteErrors]]: a stable condition to
  * match on, its SQLSTATE, and the named parts of the message (option, value, journal, offset,
  * ...). The message reads as Spark's own, `[CONDITION] text`.
  *
  * Each error stays a subclass of the JDK exception the connector raised before it had
  * conditions: code catching `IllegalArgumentException` still does, and PySpark still converts
  * it to its own `IllegalArgumentException`, whose `getCondition()` then answers ours.
  *
  * To match any of the connector's errors, protobuf decoding's included, match
  * `org.apache.spark.SparkThrowable` and its condition's `GAZETTE_` prefix.
  */
sealed trait GazetteThrowable extends ConditionedThrowable {
  protected def condition: String
  protected def sqlState: String
  protected def parameters: Map[String, String]

  override def getSqlState: String = sqlState
  override def getMessageParameters: java.util.Map[String, String] = parameters.asJava
  override def isInternalError: Boolean = condition == GazetteErrors.InternalErrorCondition
}

final class GazetteIllegalArgumentException private[spark] (
    protected val condition: String,
    protected val sqlState: String,
    protected val parameters: Map[String, String],
    message: String,
    cause: Throwable = null
) extends IllegalArgumentException(s"[$condition] $message", cause) with GazetteThrowable

final class GazetteIllegalStateException private[spark] (
    protected val condition: String,
    protected val sqlState: String,
    protected val parameters: Map[String, String],
    message: String,
    cause: Throwable = null
) extends IllegalStateException(s"[$condition] $message", cause) with GazetteThrowable

final class GazetteUnsupportedOperationException private[spark] (
    protected val condition: String,
    protected val sqlState: String,
    protected val parameters: Map[String, String],
    message: String,
    cause: Throwable = null
) extends UnsupportedOperationException(s"[$condition] $message", cause) with GazetteThrowable
