package io.sparkgazette.spark
package reflection

import org.apache.spark.sql.connector.read.streaming.MicroBatchStream

/** Whether this Spark has real-time mode (4.1 and newer): the source serves real-time batches
  * only there, and the sink, only there, refuses a query whose trigger it cannot tell.
  */
private[spark] object RealTimeMode {
  lazy val available: Boolean =
    try {
      Class.forName("org.apache.spark.sql.connector.read.streaming.SupportsRealTimeMode", false,
        classOf[MicroBatchStream].getClassLoader)
      true
    } catch { case _: ClassNotFoundException | _: LinkageError => false }
}
