package io.sparkgazette.client

import java.io.InputStream
import java.util.concurrent.LinkedBlockingQueue

import com.google.protobuf.UnsafeByteOperations
import io.grpc.{CallOptions, Channel, ClientCall, KnownLength, Metadata, MethodDescriptor, Status}
import io.sparkgazette.client.protocol.{JournalGrpc, ReadRequest, ReadResponse}

/** The responses of one Read RPC, up to `ahead` of them asked for before the reader takes them.
  *
  * A blocking stub asks for one response at a time: each is then framed and parsed only once
  * the reader wants it, a round trip between the reader's thread and the transport's per
  * response, and the read runs at the speed of those hand-offs. Here gRPC's threads parse the
  * next responses while the reader works on the current one. More are asked for a quarter of
  * `ahead` at a time, not one per response taken: each request wakes one of gRPC's threads,
  * and a broker's response carries at most 32 KiB, so one per response would be tens of
  * thousands of wake-ups per GiB. `ahead` bounds the memory a Read holds.
  *
  * Fails as the blocking stub does: with the call's status as a `StatusRuntimeException`; and
  * with DEADLINE_EXCEEDED when `idleTimeoutMs` (> 0) passes without a response while the reader
  * waits for one. A broker behind a partition that drops packets looks, to a stream opened
  * before it, like one that is slow to answer, until gRPC's keepalive gives up on the
  * connection: a Read that must be answered at once (of bytes that exist, not blocking) need not
  * wait that long.
  */
private[client] final class ReadStream(channel: Channel, request: ReadRequest, ahead: Int, idleTimeoutMs: Long = 0)
    extends Iterator[ReadResponse] {
  import ReadStream._

  private val received = new LinkedBlockingQueue[AnyRef]()
  private val call: ClientCall[ReadRequest, ReadResponse] = channel.newCall(Method, CallOptions.DEFAULT)
  private var next_ : AnyRef = _
  private val refill = math.max(1, ahead / 4)
  // Responses taken since more were last asked for.
  private var taken = 0

  call.start(
    new ClientCall.Listener[ReadResponse] {
      override def onMessage(message: ReadResponse): Unit = received.put(message)
      override def onClose(status: Status, trailers: Metadata): Unit = received.put(Closed(status, trailers))
    },
    new Metadata()
  )
  call.sendMessage(request)
  call.halfClose()
  call.request(ahead)

  override def hasNext: Boolean = {
    if (next_ == null) next_ = if (idleTimeoutMs > 0) answerWithin(idleTimeoutMs) else received.take()
    next_ match {
      case Closed(status, _) if status.isOk => false
      case Closed(status, trailers) => throw status.asRuntimeException(trailers)
      case _ => true
    }
  }

  override def next(): ReadResponse = {
    if (!hasNext) throw new NoSuchElementException("the Read has ended")
    val r = next_.asInstanceOf[ReadResponse]
    next_ = null
    taken += 1
    if (taken == refill) { call.request(taken); taken = 0 }
    r
  }

  private def answerWithin(ms: Long): AnyRef = {
    val r = received.poll(ms, java.util.concurrent.TimeUnit.MILLISECONDS)
    if (r != null) r
    else {
      call.cancel("no response within the idle timeout", null)
      Closed(Status.DEADLINE_EXCEEDED.withDescription(s"the broker sent nothing for $ms ms"), new Metadata())
    }
  }

  /** Ends the call; responses not yet taken are dropped. */
  def cancel(): Unit = call.cancel("the reader is done with this Read", null)
}

private[client] object ReadStream {
  private final case class Closed(status: Status, trailers: Metadata)

  /** The Read RPC, each response's content a view of the one array its message is read into:
    * the generated marshaller copies the content once more, out of the decoder's buffer.
    */
  private val Method: MethodDescriptor[ReadRequest, ReadResponse] =
    JournalGrpc.METHOD_READ.toBuilder(JournalGrpc.METHOD_READ.getRequestMarshaller, AliasingMarshaller).build()

  private object AliasingMarshaller extends MethodDescriptor.Marshaller[ReadResponse] {
    override def stream(r: ReadResponse): InputStream = JournalGrpc.METHOD_READ.getResponseMarshaller.stream(r)

    override def parse(in: InputStream): ReadResponse = in match {
      case known: KnownLength =>
        val bytes = new Array[Byte](known.available())
        var n = 0
        while (n < bytes.length) {
          val r = in.read(bytes, n, bytes.length - n)
          if (r < 0) throw new java.io.EOFException(s"a Read response ended after $n of ${bytes.length} bytes")
          n += r
        }
        // An array no one else holds: slices of it may stand for the parsed bytes fields.
        val coded = UnsafeByteOperations.unsafeWrap(bytes).newCodedInput()
        coded.enableAliasing(true)
        ReadResponse.parseFrom(coded)
      case _ => JournalGrpc.METHOD_READ.getResponseMarshaller.parse(in)
    }
  }

  /** Responses asked for ahead of the reader: with a broker's 32 KiB per response, about 2 MiB,
    * which keeps the reader fed while it frames what it has.
    */
  val Ahead = 64
}
