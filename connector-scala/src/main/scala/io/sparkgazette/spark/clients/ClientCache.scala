package io.sparkgazette.spark
package clients

import java.util.concurrent.ConcurrentHashMap

import io.sparkgazette.client.{ClientConfig, GazetteClient}

/** One [[GazetteClient]] per configuration per JVM, shared by the tasks of an executor: gRPC
  * channels are expensive to open and safe to share.
  */
private[spark] object ClientCache {
  private val clients = new ConcurrentHashMap[ClientConfig, GazetteClient]()

  def apply(config: ClientConfig): GazetteClient = clients.computeIfAbsent(config, c => new GazetteClient(c))
}
