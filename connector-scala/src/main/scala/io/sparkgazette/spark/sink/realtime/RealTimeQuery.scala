package io.sparkgazette.spark
package sink
package realtime

import java.util.UUID

import scala.util.Try

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
    Try {
      val shared = spark.getClass.getMethod("sharedState").invoke(spark)
      val active = shared.getClass.getMethod("activeStreamingQueries").invoke(shared)
        .asInstanceOf[java.util.Map[UUID, AnyRef]]
      Option(active.get(UUID.fromString(queryId))).exists { execution =>
        val trigger = execution.getClass.getMethod("trigger").invoke(execution)
        trigger.getClass.getSimpleName.startsWith("RealTimeTrigger")
      }
    }.getOrElse(false)

  /** The batch Spark is running on this thread (`MicroBatchExecution.BATCH_ID_KEY`). */
  def currentBatch(spark: SparkSession): Option[Long] =
    Option(spark.sparkContext.getLocalProperty("streaming.sql.batchId")).flatMap(_.toLongOption)
}
