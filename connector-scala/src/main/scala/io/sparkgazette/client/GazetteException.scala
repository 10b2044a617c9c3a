package io.sparkgazette.client

import io.sparkgazette.client.protocol.Status

/** A Gazette RPC that failed for good: retries, where allowed, did not help. Every message
  * names the RPC, the journal (and offset, where one applies) and the broker endpoint.
  */
class GazetteException(message: String, cause: Throwable = null) extends RuntimeException(message, cause)

/** A broker answered with a non-OK status. */
class BrokerStatusException(
    val rpc: String,
    val journal: String,
    val status: Status,
    val endpoint: String,
    where: String = ""
) extends GazetteException(
      s"$rpc of journal $journal$where via $endpoint failed: ${status.name}${BrokerStatusException.hint(status)}"
    )

object BrokerStatusException {
  private def hint(status: Status): String = status match {
    case Status.JOURNAL_NOT_FOUND => " (no such journal; check its name, or apply its spec first)"
    case Status.NOT_ALLOWED => " (the journal's flags do not allow this: it is read-only or write-only)"
    case Status.SUSPENDED => " (the journal is suspended)"
    case Status.INSUFFICIENT_JOURNAL_BROKERS =>
      " (fewer brokers are assigned than the journal's replication needs)"
    case Status.FRAGMENT_STORE_UNHEALTHY => " (the journal's fragment store is unhealthy)"
    case _ => ""
  }
}

/** No broker could be reached within the client's retry timeout. */
class BrokerUnavailableException(val rpc: String, val journal: String, val endpoint: String, where: String,
    cause: Throwable, retryTimeout: scala.concurrent.duration.FiniteDuration)
    extends GazetteException(
      s"$rpc of journal $journal$where: broker $endpoint is unreachable after retrying for $retryTimeout " +
        s"(${Option(cause).map(_.getMessage).orNull})",
      cause
    )

/** The broker could not serve a persisted fragment either, after its fragment store `store`
  * failed or stopped answering, and retrying for the client's retry timeout did not help.
  */
class StoreUnavailableException(rpc: String, journal: String, endpoint: String, where: String, val store: String,
    outage: String, cause: Throwable, retryTimeout: scala.concurrent.duration.FiniteDuration)
    extends BrokerUnavailableException(rpc, journal, endpoint, where, cause, retryTimeout) {
  override def getMessage: String =
    s"$rpc of journal $journal$where: its fragment store $store $outage, and broker $endpoint did not serve the " +
      s"fragment from it either (${Option(cause).map(_.getMessage).orNull}); gave up after retrying for " +
      s"$retryTimeout (retryTimeout)"
}

/** A broker answered no ListFragments within the retry timeout, and a List at once: brokers list a
  * journal's fragments only once they have listed its fragment store `store`, and the bytes from
  * `offset` (which its Read could not serve yet) are there.
  */
class StoreUnlistedException(journal: String, endpoint: String, store: String, offset: Long, cause: Throwable,
    retryTimeout: scala.concurrent.duration.FiniteDuration)
    extends StoreUnavailableException("ListFragments", journal, endpoint, "", store, "", cause, retryTimeout) {
  override def getMessage: String =
    s"journal $journal: its bytes from offset $offset are in its fragment store $store, and broker $endpoint, " +
      s"which answers a List at once, answered no ListFragments after retrying for $retryTimeout (retryTimeout): " +
      "a broker lists a journal's fragments only once it has listed its store, which it may be unable to reach " +
      s"(${Option(cause).map(_.getMessage).orNull})"
}

/** The brokers refused the client's bearer token (UNAUTHENTICATED) and no token they accept could
  * be had from its `credentials`: the token sent (if `sent`) expired at `expiry` and was not renewed
  * within the retry timeout, or was refused although current (`reason`, the broker's), or none
  * could be read ([[auth.TokenUnavailableException]] as the cause). It holds no token, and no
  * message shows one.
  */
class AuthTokenException(val rpc: String, val journal: String, val endpoint: String, where: String,
    val credentials: auth.Credentials, val sent: Boolean, val expiry: Option[java.time.Instant],
    val expired: Boolean, val reason: String, cause: Throwable)
    extends GazetteException(
      s"$rpc of journal $journal$where via $endpoint: " + {
        val exp = expiry.fold("no exp claim")(e => s"exp $e")
        if (cause.isInstanceOf[auth.TokenUnavailableException]) s"no bearer token: $reason"
        else if (!sent) s"the broker requires a bearer token ($reason)"
        else if (expired) s"the bearer token expired ($exp) and was not renewed ($reason)"
        else s"the broker refused the bearer token ($exp): $reason"
      },
      cause
    )
