package io.sparkgazette.client

import io.grpc.{Status => GrpcStatus, StatusRuntimeException}

/** Which failed gRPC calls a later attempt, possibly at another broker, can succeed past. */
private[client] object GrpcFailures {

  /** The broker could not be reached, or did not answer in time, or the connection was lost
    * under the call. A broker killed mid-call can surface as UNKNOWN "channel closed" (its
    * cause a ClosedChannelException) rather than UNAVAILABLE, depending on when the transport
    * notices; it is the same failure.
    */
  def retryable(e: StatusRuntimeException): Boolean = e.getStatus.getCode match {
    case GrpcStatus.Code.UNAVAILABLE | GrpcStatus.Code.DEADLINE_EXCEEDED => true
    case GrpcStatus.Code.UNKNOWN | GrpcStatus.Code.INTERNAL => connectionLost(e)
    case _ => false
  }

  /** The broker refused the call's bearer token: missing, expired, signed with a key it does not
    * hold, or lacking a capability (Gazette answers all of them so).
    */
  def unauthenticated(e: StatusRuntimeException): Boolean = e.getStatus.getCode == GrpcStatus.Code.UNAUTHENTICATED

  /** Whether the channel should try to connect again at once instead of after gRPC's own
    * reconnect backoff, which grows to minutes.
    */
  def connectionLost(e: StatusRuntimeException): Boolean =
    e.getStatus.getCode == GrpcStatus.Code.UNAVAILABLE || causes(e).exists {
      // An interrupted thread's I/O is how a query stops, not a broker gone.
      case _: java.io.InterruptedIOException | _: java.nio.channels.ClosedByInterruptException => false
      case c => c.isInstanceOf[java.io.IOException]
    }

  private def causes(e: Throwable): Iterator[Throwable] =
    Iterator.iterate(e.getCause)(_.getCause).takeWhile(_ != null).take(16)
}
