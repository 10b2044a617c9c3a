package io.sparkgazette.spark
package source
package planning

import io.sparkgazette.spark.errors.GazetteErrors
import org.apache.spark.sql.connector.read.streaming._

/** How many bytes a micro-batch may read (`max`), and how many it waits for (`min`, up to
  * `maxDelayMs`). They travel through Spark as its row-count read limits: Spark hands a limit
  * back to the source that made it and never counts rows against it.
  */
private[source] final case class ByteLimits(max: Option[Long], min: Option[Long], maxDelayMs: Long) {
  def readLimit: ReadLimit = (max.map(ReadLimit.maxRows) ++ min.map(ReadLimit.minRows(_, maxDelayMs))).toSeq match {
    case Seq() => ReadLimit.allAvailable()
    case Seq(one) => one
    case both => ReadLimit.compositeLimit(both.toArray)
  }
}

private[source] object ByteLimits {
  def of(limit: ReadLimit): ByteLimits = limit match {
    case _: ReadAllAvailable => ByteLimits(None, None, 0L)
    case m: ReadMaxRows => ByteLimits(Some(m.maxRows()), None, 0L)
    case m: ReadMinRows => ByteLimits(None, Some(m.minRows()), m.maxTriggerDelayMs())
    case c: CompositeReadLimit =>
      c.getReadLimits.map(of).foldLeft(ByteLimits(None, None, 0L)) { (a, b) =>
        ByteLimits(a.max.orElse(b.max), a.min.orElse(b.min), math.max(a.maxDelayMs, b.maxDelayMs))
      }
    case other => throw GazetteErrors.internal(s"unsupported read limit $other")
  }
}
