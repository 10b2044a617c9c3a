package io.sparkgazette.spark
package options

import scala.concurrent.duration.FiniteDuration

import io.sparkgazette.client.auth.Credentials
import io.sparkgazette.client.{ClientConfig, Tls}

/** How the connector's clients reach the brokers, the same for source and sink: deadlines and
  * retry budget (options `rpcTimeout`, `retryTimeout`), TLS (`trustedCaFile`, `certFile`,
  * `certKeyFile`) and where bearer tokens come from (`authToken`, `authTokenFile`,
  * `authTokenProvider`). Unset values keep the client's defaults.
  */
private[spark] final case class BrokerConnection(rpcTimeout: Option[FiniteDuration] = None,
    retryTimeout: Option[FiniteDuration] = None,
    tls: Tls = Tls(), credentials: Credentials = Credentials.Anonymous) {

  def config(broker: String): ClientConfig = {
    val base = ClientConfig(broker)
    base.copy(
      rpcTimeout = rpcTimeout.getOrElse(base.rpcTimeout), retryTimeout = retryTimeout.getOrElse(base.retryTimeout),
      tls = tls, credentials = credentials)
  }
}
