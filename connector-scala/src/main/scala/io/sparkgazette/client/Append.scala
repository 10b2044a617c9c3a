package io.sparkgazette.client

import java.util.concurrent.TimeUnit

import scala.concurrent.{Await, Promise}
import scala.concurrent.duration.FiniteDuration

import com.google.protobuf.ByteString
import io.grpc.ManagedChannel
import io.grpc.stub.StreamObserver
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
    val requests = JournalGrpc
      .stub(channel)
      .withDeadlineAfter(timeout.toMillis, TimeUnit.MILLISECONDS)
      .append(new StreamObserver[AppendResponse] {
        override def onNext(r: AppendResponse): Unit = answer.trySuccess(r)
        override def onError(t: Throwable): Unit = answer.tryFailure(t)
        override def onCompleted(): Unit =
          answer.tryFailure(new GazetteException(s"Append of journal $journal: stream closed without a response"))
      })
    requests.onNext(first)
    chunks(content, chunkSize).foreach(c => requests.onNext(AppendRequest(content = c)))
    requests.onNext(AppendRequest())
    requests.onCompleted()
    Await.result(answer.future, timeout)
  }
}
