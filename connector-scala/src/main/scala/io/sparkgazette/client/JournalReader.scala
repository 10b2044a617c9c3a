package io.sparkgazette.client

import scala.util.control.NonFatal

import io.grpc.StatusRuntimeException
import io.sparkgazette.client.protocol.{ReadRequest, ReadResponse, Status}
import org.slf4j.LoggerFactory

/** The bytes of one journal from `offset` as a stream of [[Chunk]]s, in order and without gaps
  * or repeats, across broker restarts, route changes and persisted fragments.
  *
  * The stream ends at `endOffset` (when > 0), or, for a non-blocking read, at the journal's
  * write head. A blocking read waits for new appends. When the broker jumps over bytes that no
  * longer exist (retention removed them), the next chunk starts past [[offset]]: callers that
  * must not lose data compare the two.
  *
  * Failed attempts are retried with [[Backoff]], resuming at the next undelivered byte; the
  * reader gives up after the client's retry timeout, or at once for a status that retrying
  * cannot fix (the journal is not readable or is suspended; or it was not found three times,
  * which tolerates Etcd propagating a newly created journal).
  */
final class JournalReader private[client] (
    client: GazetteClient,
    val journal: String,
    startOffset: Long,
    endOffset: Long,
    block: Boolean
) extends Iterator[Chunk] with AutoCloseable {
  import JournalReader._

  private val config = client.config
  private val backoff = new Backoff(config.retryTimeout)
  private var next_ = startOffset
  private var writeHead_ = -1L
  private var endpoint = ""
  private var stream: ReadStream = _
  private var lastMetadata: Option[ReadResponse] = None
  private var direct: Iterator[Chunk] with AutoCloseable = _
  private var proxyNext = false
  private var progressed = false
  private var notFound = 0
  private var fromStore = 0
  private var pending: Chunk = _
  private var done = false
  @volatile private var closed = false

  /** The offset of the next byte to deliver: the end of the last chunk, or a jump's target. */
  def offset: Long = next_

  /** The journal's write head as last reported by a broker, or -1 before the first report. */
  def writeHead: Long = writeHead_

  /** How many fragments this reader read straight from the fragment store. */
  def fragmentsReadFromStore: Int = fromStore

  override def hasNext: Boolean = {
    while (pending == null && !done) step()
    pending != null
  }

  override def next(): Chunk = {
    if (!hasNext) throw new NoSuchElementException(s"journal $journal has no more bytes")
    val c = pending
    pending = null
    c
  }

  override def close(): Unit = {
    closed = true
    finish()
  }

  /** Sends the Read now, without waiting for its answer, so that it is under way while the
    * caller reads something else; the bytes are delivered as usual.
    */
  def prefetch(): Unit =
    if (stream == null && direct == null && !closed && !done && !(endOffset > 0 && next_ >= endOffset)) open()

  private def step(): Unit = {
    if (closed || (endOffset > 0 && next_ >= endOffset)) return finish()
    if (direct != null) {
      try {
        if (direct.hasNext) return deliver(direct.next())
      } catch {
        case NonFatal(e) =>
          log.warn(s"reading a fragment of $journal from the store failed; the broker will serve it: $e")
          proxyNext = true
      }
      direct.close()
      direct = null
      return
    }
    if (stream == null) open()
    try {
      if (!stream.hasNext) onEnd()
      else {
        val r = stream.next()
        if (!r.content.isEmpty) onContent(r) else onMetadata(r)
      }
    } catch {
      case _: StatusRuntimeException if closed => finish()
      case e: StatusRuntimeException => retry(e)
    }
  }

  private def open(): Unit = {
    endpoint = client.routes.endpoint(journal)
    val request = ReadRequest(
      journal = journal,
      offset = next_,
      block = block,
      doNotProxy = config.fragmentRoot.isDefined && !proxyNext,
      endOffset = endOffset
    )
    proxyNext = false
    progressed = false
    lastMetadata = None
    stream = new ReadStream(client.channels(endpoint), request, ReadStream.Ahead)
  }

  private def onContent(r: ReadResponse): Unit = {
    if (r.offset != next_)
      throw new GazetteException(s"Read of journal $journal via $endpoint returned offset ${r.offset}, wanted $next_")
    deliver(Chunk(r.offset, r.content))
  }

  private def deliver(c: Chunk): Unit = {
    pending = c
    next_ = c.end
    progressed = true
    backoff.reset()
  }

  private def onMetadata(r: ReadResponse): Unit = {
    client.routes.learnFrom(journal, r.header)
    r.status match {
      case Status.OK =>
        writeHead_ = r.writeHead
        if (r.offset > next_) {
          if (next_ >= 0) log.warn(s"journal $journal: offset jumped from $next_ to ${r.offset}")
          next_ = r.offset
        }
        lastMetadata = Some(r)
        notFound = 0
      case Status.OFFSET_NOT_YET_AVAILABLE =>
        writeHead_ = r.writeHead
        if (next_ < 0) next_ = r.offset
        finish()
      case Status.JOURNAL_NOT_FOUND if notFound < 2 =>
        notFound += 1
        retry(null)
      case s @ (Status.NOT_JOURNAL_BROKER | Status.INSUFFICIENT_JOURNAL_BROKERS | Status.WRONG_ROUTE |
          Status.NO_JOURNAL_PRIMARY_BROKER | Status.NOT_JOURNAL_PRIMARY_BROKER) =>
        retry(new BrokerStatusException("Read", journal, s, endpoint, s" at offset $next_"))
      case s =>
        finish()
        throw new BrokerStatusException("Read", journal, s, endpoint, s" at offset $next_")
    }
  }

  // A broker ends a stream at fragment boundaries it does not hold (with do_not_proxy), at
  // `endOffset`, on shutdown, and when the route changes: each resumes with a new Read.
  private def onEnd(): Unit = {
    val persisted = lastMetadata.filter(m => m.fragmentUrl.nonEmpty && m.fragment.isDefined)
    closeStream()
    persisted match {
      case Some(m) if config.fragmentRoot.isDefined && FragmentReader.readable(m.fragmentUrl) =>
        val until = if (endOffset > 0) endOffset else m.getFragment.end
        try {
          direct = FragmentReader.open(config.fragmentRoot.get, m.fragmentUrl, m.getFragment, next_, until)
          fromStore += 1
        } catch {
          case NonFatal(e) =>
            log.warn(s"cannot open fragment ${m.fragmentUrl} of $journal; the broker will serve it: $e")
            proxyNext = true
        }
      case Some(_) =>
        proxyNext = true
      case None if !progressed =>
        pause(new GazetteException(s"Read of journal $journal via $endpoint ended without progress at $next_"))
      case None =>
    }
  }

  private def retry(cause: Throwable): Unit = {
    client.routes.failed(journal, endpoint)
    // gRPC's own reconnect backoff grows to minutes: retry at this schedule's pace instead.
    cause match {
      case e: StatusRuntimeException if GrpcFailures.connectionLost(e) =>
        client.channels(endpoint).resetConnectBackoff()
      case _ =>
    }
    closeStream()
    pause(cause)
  }

  private def pause(cause: Throwable): Unit =
    if (!backoff.pause()) {
      finish()
      cause match {
        case e: BrokerStatusException => throw e
        case _ if notFound > 0 =>
          throw new BrokerStatusException("Read", journal, Status.JOURNAL_NOT_FOUND, endpoint, s" at offset $next_")
        case _ => throw new BrokerUnavailableException(
            "Read", journal, endpoint, s" at offset $next_", cause, config.retryTimeout)
      }
    } else if (backoff.attempts == 1 && cause != null) {
      log.info(s"retrying Read of $journal at offset $next_ after: ${cause.getMessage}")
    }

  private def closeStream(): Unit = {
    if (stream != null) stream.cancel()
    stream = null
  }

  private def finish(): Unit = {
    done = true
    closeStream()
    if (direct != null) { direct.close(); direct = null }
  }
}

object JournalReader {
  private val log = LoggerFactory.getLogger(classOf[JournalReader])
}
