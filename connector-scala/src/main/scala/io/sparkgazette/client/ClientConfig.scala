package io.sparkgazette.client

import scala.concurrent.duration._

/** How a [[GazetteClient]] reaches and retries the brokers.
  *
  * @param brokers        broker endpoints (`http://host:port`); any one will do, since brokers
  *                       proxy, but several keep the client working while one is down
  * @param retryTimeout   how long an RPC keeps retrying transient failures before it fails
  * @param rpcTimeout     deadline of each unary RPC attempt and of each Append attempt
  * @param fragmentRoot   the brokers' `--broker.file-root`: when set, persisted fragments of
  *                       `file://` stores are read from this directory instead of through a broker
  * @param directFragmentReads whether persisted fragments are read straight from their store
  *                       (through the signed URLs brokers hand out, or `fragmentRoot`), as
  *                       Gazette's own readers do; otherwise brokers serve every byte
  * @param appendChunkSize bytes per AppendRequest message; must stay below the broker's 4 MiB
  *                       gRPC message limit
  * @param tls            how `https://` endpoints are trusted and whom the client shows itself as
  * @param credentials    where the bearer tokens (Gazette's JWTs) sent with every RPC come from
  */
final case class ClientConfig(
    brokers: Seq[String],
    retryTimeout: FiniteDuration = 2.minutes,
    rpcTimeout: FiniteDuration = 30.seconds,
    fragmentRoot: Option[String] = None,
    directFragmentReads: Boolean = true,
    appendChunkSize: Int = 1 << 20,
    tls: Tls = Tls(),
    credentials: auth.Credentials = auth.Credentials.Anonymous
) {
  require(brokers.nonEmpty, "at least one broker endpoint is required")
  brokers.foreach(Channels.parse)
  require(
    appendChunkSize > 0 && appendChunkSize <= ClientConfig.MaxAppendChunk,
    s"appendChunkSize must be in (0, ${ClientConfig.MaxAppendChunk}], not $appendChunkSize"
  )
}

object ClientConfig {

  /** The broker's default `--broker.max-grpc-recv-size` is 4 MiB per message, framing included. */
  val MaxAppendChunk: Int = (4 << 20) - (64 << 10)

  /** A config from a comma-separated list of endpoints, e.g. `http://a:8080,http://b:8080`. */
  def apply(brokers: String): ClientConfig = ClientConfig(brokers.split(',').map(_.trim).filter(_.nonEmpty).toSeq)
}
