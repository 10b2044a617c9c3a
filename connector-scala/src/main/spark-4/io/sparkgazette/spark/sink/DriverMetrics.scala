package io.sparkgazette.spark
package sink

import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.write.Write

/** A write's driver metrics, which Spark 4 adds to its tasks' in the SQL tab of a batch write. */
private[sink] trait DriverMetrics extends Write {
  protected def driverMetrics(): Array[CustomTaskMetric]

  override def reportDriverMetrics(): Array[CustomTaskMetric] = driverMetrics()
}
