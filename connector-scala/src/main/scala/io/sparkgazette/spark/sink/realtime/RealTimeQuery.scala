package io.sparkgazette.spark
package sink
package realtime

import scala.util.{Failure, Success, Try}

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.reflection.{ActiveQuery, RealTimeMode}
import org.apache.spark.sql.SparkSession

/** Whether a stream runs in real-time mode. Spark tells a sink nothing about its trigger, and a
  * real-time batch must be written differently (see [[RealTimeDataWriter]]): its end is set by
  * time, so a batch run again after a failure may cover another range, and the micro-batch
  * protocol, which commits an epoch once, would lose or repeat rows. So the sink asks the
  * running query for its trigger (see [[ActiveQuery]]).
  */
private[sink] object RealTimeQuery {

  /** Whether the active query `queryId` has a real-time trigger. */
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

  private def trigger(spark: SparkSession, queryId: String): Try[AnyRef] =
    ActiveQuery.find(spark, queryId).map(e => e.getClass.getMethod("trigger").invoke(e))

  /** The batch Spark is running on this thread (`MicroBatchExecution.BATCH_ID_KEY`). */
  def currentBatch(spark: SparkSession): Option[Long] =
    Option(spark.sparkContext.getLocalProperty("streaming.sql.batchId")).flatMap(b => Try(b.toLong).toOption)
}
