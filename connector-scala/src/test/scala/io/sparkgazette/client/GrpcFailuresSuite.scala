package io.sparkgazette.client

import java.nio.channels.ClosedChannelException

import io.grpc.{Status => GrpcStatus}
import org.scalatest.funsuite.AnyFunSuite

class GrpcFailuresSuite extends AnyFunSuite {
  private def failed(status: GrpcStatus) = status.asRuntimeException()

  test("a broker that cannot be reached or does not answer in time is retried") {
    assert(GrpcFailures.retryable(failed(GrpcStatus.UNAVAILABLE)))
    assert(GrpcFailures.retryable(failed(GrpcStatus.DEADLINE_EXCEEDED)))
  }

  test("a connection closed under the call is retried, whatever status the transport gave it") {
    // What a List got when its only broker was killed mid-call.
    val closed = failed(GrpcStatus.UNKNOWN.withDescription("channel closed").withCause(new ClosedChannelException))
    assert(GrpcFailures.retryable(closed))
    assert(GrpcFailures.connectionLost(closed))
    val wrapped =
      failed(GrpcStatus.INTERNAL.withCause(new RuntimeException(new java.io.IOException("Connection reset"))))
    assert(GrpcFailures.retryable(wrapped))
  }

  test("other failures are not retried") {
    assert(!GrpcFailures.retryable(failed(GrpcStatus.UNKNOWN.withDescription("a bug in the broker"))))
    assert(!GrpcFailures.retryable(failed(GrpcStatus.INVALID_ARGUMENT)))
    assert(!GrpcFailures.retryable(failed(GrpcStatus.UNAUTHENTICATED.withCause(new java.io.IOException("x")))))
    assert(!GrpcFailures.retryable(failed(GrpcStatus.CANCELLED)))
    assert(!GrpcFailures.connectionLost(failed(GrpcStatus.DEADLINE_EXCEEDED)))
    assert(
      !GrpcFailures.retryable(failed(GrpcStatus.UNKNOWN.withCause(new java.nio.channels.ClosedByInterruptException))))
    assert(!GrpcFailures.retryable(failed(GrpcStatus.UNKNOWN.withCause(new java.io.InterruptedIOException("stop")))))
  }
}
