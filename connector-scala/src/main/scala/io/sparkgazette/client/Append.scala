package io.sparkgazette.client

import java.io.{ByteArrayInputStream, InputStream, OutputStream}
import java.util.concurrent.TimeUnit

import scala.concurrent.duration.FiniteDuration
import scala.concurrent.{Await, Promise}

import com.google.protobuf.{ByteString, CodedOutputStream}
import io.grpc.stub.{ClientCallStreamObserver, ClientCalls, ClientResponseObserver}
import io.grpc.{CallOptions, Drainable, KnownLength, ManagedChannel, MethodDescriptor}
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
    val call = channel.newCall(Method, CallOptions.DEFAULT.withDeadlineAfter(timeout.toMillis, TimeUnit.MILLISECONDS))
    val requests = ClientCalls
      .asyncClientStreamingCall(
        call,
        new ClientResponseObserver[AppendRequest, AppendResponse] {
          override def beforeStart(stream: ClientCallStreamObserver[AppendRequest]): Unit =
            stream.setOnReadyHandler(() => ready.synchronized(ready.notifyAll()))
          override def onNext(r: AppendResponse): Unit = answer.trySuccess(r)
          override def onError(t: Throwable): Unit = { answer.tryFailure(t); ready.synchronized(ready.notifyAll()) }
          override def onCompleted(): Unit =
            answer.tryFailure(new GazetteException(s"Append of journal $journal: stream closed without a response"))
        }
      ).asInstanceOf[ClientCallStreamObserver[AppendRequest]]
    // Chunks go out as the transport takes them: content of any size (a mapped file) is never
    // queued whole in gRPC's buffers.
    def send(r: AppendRequest): Unit = {
      ready.synchronized { while (!requests.isReady && !answer.isCompleted) ready.wait(100) }
      if (!answer.isCompleted) requests.onNext(r)
    }
    try {
      send(first)
      chunks(content, chunkSize).foreach(c => send(AppendRequest(content = c)))
      send(AppendRequest())
      if (!answer.isCompleted) requests.onCompleted()
      Await.result(answer.future, timeout)
    } catch {
      // Interrupted (a task killed) or timed out: the broker is told now, not at the deadline,
      // and discards the append (it commits only on the final empty message).
      case e: Throwable =>
        if (!answer.isCompleted) requests.cancel("append abandoned", e)
        throw e
    }
  }

  /** The Append RPC, its requests written straight into the transport's buffers: the generated
    * marshaller serializes every chunk into an array of its own first, a MiB of garbage a MiB
    * appended, each too large for the young generation.
    */
  private val Method: MethodDescriptor[AppendRequest, AppendResponse] =
    JournalGrpc.METHOD_APPEND.toBuilder(DrainingMarshaller, JournalGrpc.METHOD_APPEND.getResponseMarshaller).build()

  private object DrainingMarshaller extends MethodDescriptor.Marshaller[AppendRequest] {
    override def stream(r: AppendRequest): InputStream = new DrainingStream(r)
    override def parse(in: InputStream): AppendRequest = AppendRequest.parseFrom(in)
  }

  /** A request that gRPC drains into its output stream; read (which gRPC does not) serializes it. */
  private final class DrainingStream(r: AppendRequest) extends InputStream with Drainable with KnownLength {
    private var remaining = r.serializedSize
    private var serialized: InputStream = _

    override def drainTo(out: OutputStream): Int = {
      val size = remaining
      val coded = CodedOutputStream.newInstance(out, math.min(size, 64 << 10).max(1))
      r.writeTo(coded)
      coded.flush()
      remaining = 0
      size
    }

    override def available(): Int = if (serialized != null) serialized.available() else remaining

    override def read(): Int = bytes().read()

    override def read(b: Array[Byte], off: Int, len: Int): Int = bytes().read(b, off, len)

    private def bytes(): InputStream = {
      if (serialized == null) serialized = new ByteArrayInputStream(r.toByteArray)
      serialized
    }
  }
}
