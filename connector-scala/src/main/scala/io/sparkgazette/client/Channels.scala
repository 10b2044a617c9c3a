package io.sparkgazette.client

import java.net.URI
import java.util.concurrent.{ConcurrentHashMap, TimeUnit}

import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder
import io.grpc.netty.shaded.io.netty.channel.ChannelOption
import io.grpc.netty.shaded.io.netty.channel.epoll.{Epoll, EpollChannelOption}
import io.grpc.{
  CallOptions, Channel, ClientCall, ClientInterceptor, ForwardingClientCall, ManagedChannel, Metadata, MethodDescriptor
}
import io.sparkgazette.client.auth.TokenSource

/** gRPC channels, one per broker endpoint (`http://host:port` or `https://host:port`), shared
  * by every RPC of a client. Each call carries the bearer token `tokens` gave last (tokens are
  * renewed while channels live: one header for a channel's life would outlive its token).
  */
final class Channels(tls: Tls = Tls(), tokens: Option[TokenSource] = None) extends AutoCloseable {
  private lazy val sslContext = tls.sslContext
  private val channels = new ConcurrentHashMap[String, ManagedChannel]()

  def apply(endpoint: String): ManagedChannel = channels.computeIfAbsent(endpoint, open)

  private def open(endpoint: String): ManagedChannel = {
    val uri = Channels.parse(endpoint)
    val secure = uri.getScheme == "https"
    val port = if (uri.getPort > 0) uri.getPort else if (secure) 443 else 80
    val b = NettyChannelBuilder
      .forAddress(uri.getHost, port)
      // A List of many journals can exceed gRPC's 4 MiB default, as Gazette's own tools note.
      .maxInboundMessageSize(Channels.MaxMessageSize)
      // Many Read streams share one connection and are drained in arbitrary order: a large
      // window keeps a slow stream from stalling the others.
      .flowControlWindow(Channels.FlowControlWindow)
      // Gazette's brokers take a ping at most every 5 minutes (gRPC's default enforcement): pinged
      // more often on a quiet stream, such as a blocking Read of an idle journal, a broker answers
      // GOAWAY too_many_pings and closes the connection, and the Read fails after its retry budget.
      .keepAliveTime(Channels.KeepAliveSeconds, TimeUnit.SECONDS)
      // A broker gone silent (a partition that drops packets) is found by TCP's keepalive instead,
      // as Gazette's Go clients find it (Go's dialer keeps TCP connections alive), within a minute.
      .withOption[java.lang.Boolean](ChannelOption.SO_KEEPALIVE, true)
    if (Epoll.isAvailable) {
      b.withOption[Integer](EpollChannelOption.TCP_KEEPIDLE, 30)
      b.withOption[Integer](EpollChannelOption.TCP_KEEPINTVL, 10)
      b.withOption[Integer](EpollChannelOption.TCP_KEEPCNT, 3)
    }
    tokens.foreach(t => b.intercept(new Channels.Bearer(t)))
    (if (secure) b.sslContext(sslContext).useTransportSecurity() else b.usePlaintext()).build()
  }

  override def close(): Unit = {
    channels.values().forEach(c => c.shutdownNow())
    channels.values().forEach(c => c.awaitTermination(5, TimeUnit.SECONDS))
    channels.clear()
  }
}

object Channels {
  val MaxMessageSize: Int = 16 << 20
  val FlowControlWindow: Int = 8 << 20

  /** gRPC keepalive pings, above the 5 minutes Gazette's brokers require between them. */
  val KeepAliveSeconds: Long = 330

  private val Authorization = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER)

  /** Adds `authorization: Bearer <token>` to each call, the token `tokens` gave its caller last. */
  private final class Bearer(tokens: TokenSource) extends ClientInterceptor {
    override def interceptCall[Q, A](method: MethodDescriptor[Q, A], options: CallOptions, next: Channel)
        : ClientCall[Q, A] =
      new ForwardingClientCall.SimpleForwardingClientCall[Q, A](next.newCall(method, options)) {
        override def start(listener: ClientCall.Listener[A], headers: Metadata): Unit = {
          tokens.latest.orElse(tokens.current()).foreach(t => headers.put(Authorization, s"Bearer ${t.value}"))
          super.start(listener, headers)
        }
      }
  }

  /** Validates a broker endpoint, naming it when it is not an http(s)://host:port URL. */
  def parse(endpoint: String): URI = {
    val uri =
      try new URI(endpoint.trim)
      catch { case e: Exception => throw new IllegalArgumentException(s"broker endpoint '$endpoint' is not a URL", e) }
    if (!Set("http", "https").contains(uri.getScheme) || uri.getHost == null)
      throw new IllegalArgumentException(
        s"broker endpoint '$endpoint' must look like http://host:port or https://host:port"
      )
    uri
  }
}
