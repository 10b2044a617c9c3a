package io.sparkgazette.spark
package sink
package metrics

/** A stream's sink metrics for its progress (`StreamingQueryProgress.sink.metrics`): the counts
  * of the epochs committed since Spark last asked, which it does once per trigger, after the
  * trigger's batch committed. A trigger that wrote nothing reports zeros.
  */
private[spark] final class SinkProgress {
  private var pending = SinkCounts.Zero

  def committed(counts: SinkCounts): Unit = synchronized { pending = pending + counts }

  def take(): java.util.Map[String, String] = synchronized {
    val out = new java.util.LinkedHashMap[String, String]()
    SinkMetrics.Names.zip(pending.values).foreach { case (k, v) => out.put(k, v.toString) }
    pending = SinkCounts.Zero
    out
  }
}
