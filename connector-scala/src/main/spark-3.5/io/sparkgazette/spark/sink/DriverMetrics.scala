package io.sparkgazette.spark
package sink

import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.write.Write

/** A write's driver metrics: Spark 3.5 takes none (it has no `Write.reportDriverMetrics`). */
private[sink] trait DriverMetrics extends Write {
  protected def driverMetrics(): Array[CustomTaskMetric]
}
