package io.sparkgazette.spark
package source
package planning

/** A journal as the source plans it: its framing and labels, the Etcd revision that created it,
  * and whether it is suspended with no replica serving reads (Gazette's FULL suspension).
  */
private[spark] final case class JournalInfo(name: String, contentType: String, labels: Map[String, Seq[String]],
    revision: Long = 0L,
    suspended: Boolean = false, suspendedAt: Long = 0L, refreshIntervalMs: Long = 0L)
