package io.sparkgazette.spark
package sink
package realtime

import java.util.UUID

import scala.util.{Failure, Success, Try}

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.runtime.RealTimeMode
import org.apache.spark.sql.SparkSession

/** Whether a stream runs in real-time mode. Spark tells a sink nothing about its trigger, and a
  * real-time batch must be written differently (see [[RealTimeDataWriter]]): its end is set by
  * time, so a batch run again after a failure may cover another range, and the micro-batch
  * protocol, which commits an epoch once, would lose or repeat rows. So the sink asks the
  * running query for its trigger, through Spark's internal classes, by name.
  */
private[spark] object RealTimeQuery {

  /** Whether the active query `queryId` has a real-time trigger. The query runs in a session of
    * its own, whose query manager knows no query; the state its sessions share lists it.
    */
  def isRealTime(spark: SparkSession, queryId: String): Boolean =
    trigger(spark, queryId) match {
      case Success(t) => t.getClass.getSimpleName.startsWith("RealTimeTrigger")
      // Where Spark has real-time mode, a query whose trigger cannot be told is not written at
      // all: the micro-batch protocol would lose or repeat rows of a real-time batch.
      case Failure(e) if RealTimeMode.available =>
        throw GazetteErrors.internal(s"the Gazette sink cannot tell whether query $queryId runs in real-time mode " +
          s"on this Spark (${spark.version}): $e")
      case Failure(_) => false
    }

  private def trigger(spark: SparkSession, queryId: String): Try[AnyRef] = Try {
    val shared = spark.getClass.getMethod("sharedState").invoke(spark)
    val active = shared.getClass.getMethod("activeStreamingQueries").invoke(shared)
      .asInstanceOf[java.util.Map[UUID, AnyRef]]
    val execution = Option(active.get(UUID.fromString(queryId)))
      .getOrElse(throw new NoSuchElementException(s"no active query $queryId"))
    execution.getClass.getMethod("trigger").invoke(execution)
  }

  /** The batch Spark is running on this thread (`MicroBatchExecution.BATCH_ID_KEY`). */
  def currentBatch(spark: SparkSession): Option[Long] =
    Option(spark.sparkContext.getLocalProperty("streaming.sql.batchId")).flatMap(b => Try(b.toLong).toOption)
}
