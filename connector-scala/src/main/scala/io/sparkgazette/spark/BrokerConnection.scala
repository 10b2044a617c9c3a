package io.sparkgazette.spark

import scala.concurrent.duration.FiniteDuration

import io.sparkgazette.client.ClientConfig

/** How the connector's clients reach the brokers, the same for source and sink: deadlines and
  * retry budget (options `rpcTimeout`, `retryTimeout`). Unset values keep the client's defaults.
  */
final case class BrokerConnection(rpcTimeout: Option[FiniteDuration] = None, retryTimeout: Option[FiniteDuration] = None) {

  def config(broker: String): ClientConfig = {
    val base = ClientConfig(broker)
    base.copy(rpcTimeout = rpcTimeout.getOrElse(base.rpcTimeout), retryTimeout = retryTimeout.getOrElse(base.retryTimeout))
  }
}
