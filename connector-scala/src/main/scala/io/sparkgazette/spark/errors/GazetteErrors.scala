package io.sparkgazette.spark
package errors

import io.sparkgazette.client.auth.{Credentials, TokenUnavailableException}
import io.sparkgazette.client.{
  AuthTokenException, BrokerStatusException, BrokerUnavailableException, GazetteException => ClientException,
  StoreUnavailableException
}

/** Every error the connector reports to users but protobuf decoding's (whose package builds its
  * own the same way): each names what was wrong and where (option, journal, offset), and how to
  * proceed where there is a way. A builder names the error's wording in `error-conditions.json`
  * and gives the parameters that fill it (see [[ErrorConditions]]); the builders are grouped by
  * what went wrong, and the broker's failures are here.
  */
private[spark] object GazetteErrors extends OptionErrors with ReadErrors with CheckpointErrors with WriteErrors {

  /** Every condition the connector's errors carry, with what it means: the reference page's table. */
  private[spark] val conditions: Seq[(String, String)] = ErrorConditions.all.map(c => c.name -> c.meaning)

  /** The client's retries found no broker of a journal: its message (RPC, journal, broker) under a condition. */
  private[spark] def brokerUnavailable(e: BrokerUnavailableException): GazetteIllegalStateException = e match {
    case s: StoreUnavailableException => storeUnavailable(s)
    case _ =>
      GazetteIllegalStateException("GAZETTE_BROKER_UNAVAILABLE",
        Map("rpc" -> e.rpc, "journal" -> e.journal, "broker" -> e.endpoint, "message" -> e.getMessage), e)
  }

  /** A fragment neither its store nor a broker served: its message (journal, store, last error) under a condition. */
  private[errors] def storeUnavailable(e: StoreUnavailableException): GazetteIllegalStateException =
    GazetteIllegalStateException(
      "GAZETTE_FRAGMENT_STORE_UNAVAILABLE",
      Map(
        "rpc" -> e.rpc, "journal" -> e.journal, "broker" -> e.endpoint, "store" -> e.store, "message" -> e.getMessage),
      e
    )

  /** An RPC the client gave up on for another reason: a broker's status, or a failure for good. */
  private[spark] def brokerRefused(e: ClientException): GazetteIllegalStateException = e match {
    case a: AuthTokenException => authToken(a)
    case s: BrokerStatusException =>
      GazetteIllegalStateException(
        "GAZETTE_BROKER_REFUSED",
        Map("rpc" -> s.rpc, "journal" -> s.journal, "broker" -> s.endpoint, "status" -> s.status.name,
          "message" -> s.getMessage),
        s
      )
    case other => GazetteIllegalStateException("GAZETTE_BROKER_REFUSED", Map("message" -> other.getMessage), other)
  }

  /** Brokers refused the query's token and no token they accept could be had: which way, with the
    * token's `exp` and its source (the option, and the file or class), never the token.
    */
  private[spark] def authToken(e: AuthTokenException): GazetteIllegalStateException = {
    val source = e.credentials match {
      case Credentials.Anonymous => "no option"
      case Credentials.Fixed(_) => "option authToken"
      case Credentials.File(path) => s"authTokenFile $path"
      case Credentials.Provider(cls, _) => s"authTokenProvider $cls"
    }
    val variant =
      if (e.getCause.isInstanceOf[TokenUnavailableException]) "UNAVAILABLE"
      else if (!e.sent) "MISSING"
      else if (e.expired) "EXPIRED"
      else "REFUSED"
    val exp = e.expiry.fold("none (the token has no exp claim)")(_.toString)
    GazetteIllegalStateException(s"GAZETTE_AUTH_TOKEN.$variant",
      Map("rpc" -> e.rpc, "journal" -> e.journal, "broker" -> e.endpoint, "source" -> source, "exp" -> exp,
        "reason" -> e.reason), e)
  }

  /** Runs `body`, a call Spark makes of the connector, raising the client's errors under their
    * conditions: below this boundary they keep their own types, which the connector's retries
    * and recoveries match.
    */
  private[spark] def brokerCalls[T](body: => T): T =
    try body
    catch {
      case e: BrokerUnavailableException => throw brokerUnavailable(e)
      case e: ClientException => throw brokerRefused(e)
    }

  /** What the connector itself should have made impossible. */
  private[spark] def internal(message: String): GazetteIllegalStateException =
    GazetteIllegalStateException(ErrorConditions.Internal, Map("message" -> message))
}
