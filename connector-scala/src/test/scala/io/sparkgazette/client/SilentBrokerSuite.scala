package io.sparkgazette.client

import java.net.InetSocketAddress

import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._
import scala.concurrent.{Await, Future}

import io.grpc.ServerServiceDefinition
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder
import io.grpc.stub.ServerCalls
import io.sparkgazette.client.protocol.{JournalGrpc, ReadRequest, ReadResponse}
import org.scalatest.funsuite.AnyFunSuite

/** A broker whose connection stays up but that answers nothing, as one behind a partition that
  * drops packets looks to a stream opened before it: a Read of bytes that exist (non-blocking)
  * is given up after `rpcTimeout` without an answer and retried, within the retry budget, instead
  * of waiting on the connection for as long as gRPC's keepalive takes, or for ever.
  */
class SilentBrokerSuite extends AnyFunSuite {
  test("a non-blocking Read that gets no answer is retried and fails after retryTimeout, naming the broker") {
    val reads = new java.util.concurrent.atomic.AtomicInteger()
    val silent = ServerServiceDefinition.builder(JournalGrpc.SERVICE.getName)
      .addMethod(
        JournalGrpc.METHOD_READ,
        ServerCalls.asyncServerStreamingCall[ReadRequest, ReadResponse]((_, _) => { reads.incrementAndGet(); () })
      )
      .build()
    val server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(silent).build().start()
    val endpoint = s"http://127.0.0.1:${server.getPort}"
    val client = new GazetteClient(ClientConfig(Seq(endpoint), retryTimeout = 3.seconds, rpcTimeout = 1.second))
    try {
      val reading = Future(client.read("silent/journal", 0, 4096).hasNext)
      val e = intercept[BrokerUnavailableException](Await.result(reading, 60.seconds))
      assert(e.getMessage.contains(endpoint) && e.getMessage.contains("silent/journal"), e.getMessage)
      assert(reads.get >= 2, s"${reads.get} Reads: the silent one was not retried")
    } finally {
      client.close()
      server.shutdownNow()
    }
  }
}
