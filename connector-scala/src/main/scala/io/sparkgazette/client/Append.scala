package io.sparkgazette.client

import java.util.concurrent.TimeUnit

import scala.concurrent.{Await, Promise}
import scala.concurrent.duration.FiniteDuration

import com.google.protobuf.ByteString
import io.grpc.ManagedChannel
import io.grpc.stub.{ClientCallStreamObserver, ClientResponseObserver}
import io.sparkgazette.client.protocol.{AppendRequest, AppendResponse, JournalGrpc}

/** One Append RPC: a first message naming the journal, the content in chunks, an empty message
  * that commits, then the half-close. The broker writes all of it contiguously or none of it.
  */
private[client] object Append {

  /** Splits `content` into pieces of at most `size` bytes, without copying. */
  def chunks(content: ByteString, size: Int): Iterator[ByteString] =
    Iterator.range(0, content.size(), size).map(i => content.substring(i, math.min(i + size, content.size())))

  /** Streams one attempt (`first` names the journal, and any registers) and waits for the
    * broker's answer.
    */
  def attempt(
      channel: ManagedChannel,
      first: AppendRequest,
      content: ByteString,
      chunkSize: Int,
      timeout: FiniteDuration
  ): AppendResponse = {
    val journal = first.journal
    val answer = Promise[AppendResponse]()
    val ready = new Object
    val requests = JournalGrpc
      .stub(channel)
      .withDeadlineAfter(timeout.toMillis, TimeUnit.MILLISECONDS)
      .append(new ClientResponseObserver[AppendRequest, AppendResponse] {
        override def beforeStart(stream: ClientCallStreamObserver[AppendRequest]): Unit =
          stream.setOnReadyHandler(() => ready.synchronized(ready.notifyAll()))
        override def onNext(r: AppendResponse): Unit = answer.trySuccess(r)
        override def onError(t: Throwable): Unit = { answer.tryFailure(t); ready.synchronized(ready.notifyAll()) }
        override def onCompleted(): Unit =
          answer.tryFailure(new GazetteException(s"Append of journal $journal: stream closed without a response"))
      }).asInstanceOf[ClientCallStreamObserver[AppendRequest]]
    // Chunks go out as the transport takes them: content of any size (a mapped file) is never
    // queued whole in gRPC's buffers.
    def send(r: AppendRequest): Unit = {
      ready.synchronized { while (!requests.isReady && !answer.isCompleted) ready.wait(100) }
      if (!answer.isCompleted) requests.onNext(r)
    }
    send(first)
    chunks(content, chunkSize).foreach(c => send(AppendRequest(content = c)))
    send(AppendRequest())
    if (!answer.isCompleted) requests.onCompleted()
    Await.result(answer.future, timeout)
  }
}
