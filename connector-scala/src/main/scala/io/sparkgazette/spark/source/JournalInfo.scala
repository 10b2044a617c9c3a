package io.sparkgazette.spark
package source

import java.util.concurrent.{Executors, ThreadFactory}

import scala.concurrent.duration.Duration
import scala.concurrent.{Await, ExecutionContext, Future}

import io.sparkgazette.client.GazetteClient
import io.sparkgazette.message.Framing

/** A journal as the source plans it: its framing and labels, the Etcd revision that created it,
  * and whether it is suspended with no replica serving reads (Gazette's FULL suspension).
  */
private[spark] final case class JournalInfo(name: String, contentType: String, labels: Map[String, Seq[String]],
    revision: Long = 0L,
    suspended: Boolean = false, suspendedAt: Long = 0L, refreshIntervalMs: Long = 0L)
