package io.sparkgazette.client

import java.util.concurrent.ConcurrentHashMap

import scala.concurrent.duration._

/** What readers in this JVM learned of each fragment store they read straight from, so that a
  * store that is down costs one wait, not one per fragment: after a failure the store is left
  * alone for a backoff (1 s, doubling to [[StoreHealth.MaxBackoff]]) while brokers serve its
  * fragments, and then one reader at a time tries it again. A success makes it healthy at once.
  *
  * Stores are keyed by where their signed URLs point (scheme, host and port) and the bucket or
  * container, as stores throttle a bucket at a time ([[StoreHealth.storeOf]]).
  */
private[client] final class StoreHealth(nanoTime: () => Long = () => System.nanoTime()) {
  import StoreHealth._

  private val stores = new ConcurrentHashMap[String, Outage]()

  /** Whether a reader may read from `store` now: `Some(0)` for a store that is not down; for one
    * that was, `Some(probe)` makes the caller its one prober until it reports [[succeeded]],
    * [[failed]] or [[released]] with that probe, or until [[ProbeLease]] passes (a reader that
    * stops without reporting does not block the store); `None`: leave it alone.
    */
  def admit(store: String): Option[Long] = {
    var probe = 0L
    stores.computeIfPresent(
      store,
      (_, o) => {
        val now = nanoTime()
        if (now >= o.retryAt && o.probeSince.forall(now - _ >= ProbeLease.toNanos)) {
          probe = now max 1L
          o.copy(probeSince = Some(probe))
        } else o
      }
    )
    if (probe != 0) Some(probe) else if (stores.containsKey(store)) None else Some(0L)
  }

  def succeeded(store: String): Unit = stores.remove(store)

  /** `store` failed a read for a reason of its own (no connection, no answer, a 5xx). Only a
    * failure after the backoff (a probe's) grows it: the reads that were under way when the
    * store failed fail together, and are one failure.
    */
  def failed(store: String, error: String): Unit = {
    val now = nanoTime()
    stores.merge(
      store,
      Outage(now, 1, now + InitialBackoff.toNanos, error, None),
      (o, _) =>
        if (now < o.retryAt) o.copy(lastError = error)
        else {
          val failures = o.failures + 1
          val backoff = (InitialBackoff * (1L << math.min(failures - 1, 16))) min MaxBackoff
          Outage(o.since, failures, now + backoff.toNanos, error, None)
        }
    )
  }

  /** The read admitted as `probe` ended neither way (the query stopped, or the URL needed minting
    * again): if it was the store's prober, the next reader may probe. Others' reads change nothing.
    */
  def released(store: String, probe: Long): Unit = if (probe != 0) {
    stores.computeIfPresent(store, (_, o) => if (o.probeSince.contains(probe)) o.copy(probeSince = None) else o)
    ()
  }

  /** How long `store` has been failing and its last error, if it is down. */
  def outage(store: String): Option[(FiniteDuration, String)] =
    Option(stores.get(store)).map(o =>
      ((nanoTime() - o.since).nanos.toCoarsest.asInstanceOf[FiniteDuration], o.lastError))
}

private[client] object StoreHealth {
  val InitialBackoff: FiniteDuration = 1.second
  val MaxBackoff: FiniteDuration = 30.seconds
  val ProbeLease: FiniteDuration = 2.minutes

  private final case class Outage(since: Long, failures: Int, retryAt: Long, lastError: String,
      probeSince: Option[Long])

  /** The stores of every reader in this JVM: executors' tasks share what each one learns. */
  val shared = new StoreHealth()

  /** The key of the store a signed URL points into: where it points (scheme, host and port) and,
    * where the host is shared by many stores, the bucket or container named by the path's first
    * segment (GCS's `storage.googleapis.com/<bucket>`, path-style S3 `<endpoint>/<bucket>`,
    * Azure's `<account>.blob.core.windows.net/<container>`). A virtual-hosted S3 or GCS URL names
    * its bucket in its host.
    */
  def storeOf(url: String): String =
    scala.util.Try {
      val u = new java.net.URI(url)
      val where = s"${u.getScheme}://${Option(u.getRawAuthority).getOrElse("")}"
      val host = Option(u.getHost).getOrElse("").toLowerCase
      val bucket = Option(u.getRawPath).getOrElse("").stripPrefix("/").takeWhile(_ != '/')
      if (bucket.isEmpty || virtualHosted(host)) where else s"$where/$bucket"
    }.getOrElse(FragmentUrl.redacted(url))

  private def virtualHosted(host: String): Boolean =
    (host.endsWith(".amazonaws.com") && !host.startsWith("s3.") && !host.startsWith("s3-")) ||
      (host.endsWith(".storage.googleapis.com"))
}
