package io.sparkgazette.client

import scala.util.control.NonFatal

import io.grpc.StatusRuntimeException
import io.sparkgazette.client.protocol.{Fragment, ReadRequest, ReadResponse, Status}
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
  private val health = StoreHealth.shared
  private val backoff = new Backoff(config.retryTimeout)
  private var next_ = startOffset
  private var writeHead_ = -1L
  private var endpoint = ""
  private var stream: ReadStream = _
  // The token `stream` was opened with: a broker cuts a Read at its `exp`.
  private var streamToken: Option[auth.Token] = None
  private val refusals = new auth.Refusals(client.tokens)
  private var lastMetadata: Option[ReadResponse] = None
  // The last persisted fragment a broker named, kept across Reads: whose store to blame when
  // reading stops there.
  private var persistedAt: Option[ReadResponse] = None
  // The fragment whose store refused a freshly minted URL too, and the status it answered: what
  // to say when a broker cannot serve that fragment either (the store refuses it the same way).
  private var refused: Option[(Fragment, Int)] = None
  private var direct: Iterator[Chunk] with AutoCloseable = _
  // The store `direct` reads from (null for a file), healthy again only once it delivers a chunk:
  // a store that answers and then stalls is no better than one that does not answer.
  private var directStore: String = _
  private var directConfirmed = false
  // Nonzero while this reader probes `directStore` after an outage (StoreHealth.admit).
  private var directProbe = 0L
  // Whether Reads ask for signed URLs (do_not_proxy): dropped for good once the journal's store
  // turns out to be one this reader cannot reach, so that each fragment costs one Read only.
  private var askDirect = config.directFragmentReads
  private var streamDirect = false
  private var proxyNext = false
  // The end of the fragment a broker serves after the store failed it (0: no limit): the Read
  // after that one asks for the store again.
  private var proxyUntil = 0L
  private var progressed = false
  private var contentSinceMetadata = false
  private var minted = 0
  // Reads sent on at once to the broker a NOT_JOURNAL_BROKER answer routed them to, since the
  // last progress: brokers that disagree on a route must not bounce a read forever.
  private var redirects = 0
  private var notFound = 0
  private var fromStore = 0
  private var bytesFromStore_ = 0L
  private var bytesFromBrokers_ = 0L
  private var fallbacks = 0
  private var pending: Chunk = _
  private var done = false
  @volatile private var closed = false

  /** The offset of the next byte to deliver: the end of the last chunk, or a jump's target. */
  def offset: Long = next_

  /** The journal's write head as last reported by a broker, or -1 before the first report. */
  def writeHead: Long = writeHead_

  /** How many fragments this reader read straight from the fragment store. */
  def fragmentsReadFromStore: Int = fromStore

  /** Bytes delivered from the fragment store, and from brokers. */
  def bytesFromStore: Long = bytesFromStore_
  def bytesFromBrokers: Long = bytesFromBrokers_

  /** How many times reading a fragment from the store failed and a broker served it instead. */
  def storeFallbacks: Int = fallbacks

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
        if (direct.hasNext) {
          val c = direct.next()
          confirmStore()
          bytesFromStore_ += c.content.size()
          minted = 0
          return deliver(c)
        }
        confirmStore()
      } catch {
        case NonFatal(e) =>
          storeFailed(e)
          fallBack(e)
      }
      closeDirect()
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
      case e: StatusRuntimeException if GrpcFailures.unauthenticated(e) => refused(e)
      case _: StatusRuntimeException if cutAtExpiry() => closeStream()
      case e: StatusRuntimeException => retry(e)
    }
  }

  /** Whether the Read just ended was cut by the broker at its token's expiry (the broker bounds a
    * Read by the token's `exp`) while a token it accepts is at hand: the read resumes with it at
    * once, as a Read that ends at a fragment's boundary does. Otherwise it is retried as a failure,
    * and a refused token is renewed or reported ([[refused]]).
    */
  private def cutAtExpiry(): Boolean = streamToken.exists { used =>
    val now = java.time.Instant.now()
    used.expiry.exists(e => !e.isAfter(now.plusSeconds(1))) &&
    scala.util.Try(client.tokens.current()).toOption.flatten.exists(t => t != used && !t.expired(now))
  }

  private def refused(e: StatusRuntimeException): Unit = {
    closeStream()
    client.afterRefusal(refusals, "Read", journal, s" at offset $next_", endpoint, streamToken) match {
      case auth.Refusals.RetryNow =>
      case auth.Refusals.RetryLater(_) =>
        if (!backoff.pause()) {
          finish()
          throw client.refused("Read", journal, s" at offset $next_", endpoint, client.tokens.latest, true, e)
        }
      case auth.Refusals.GiveUp(t, expired) =>
        finish()
        throw client.refused("Read", journal, s" at offset $next_", endpoint, t, expired, e)
    }
  }

  private def open(): Unit = {
    endpoint = client.routes.endpoint(journal)
    streamToken = client.token("Read", journal, s" at offset $next_", endpoint)
    val persisted = proxyNext && proxyUntil > next_
    val until = if (persisted && (endOffset <= 0 || proxyUntil < endOffset)) proxyUntil else endOffset
    // A Read of a persisted fragment's bytes has them all at hand: it needs no waiting for
    // appends, and silence on it is a broker stuck on the store, bounded as any non-blocking Read.
    val blocking = block && !persisted
    val request = ReadRequest(
      journal = journal,
      offset = next_,
      block = blocking,
      doNotProxy = askDirect && !proxyNext,
      endOffset = until
    )
    streamDirect = request.doNotProxy
    proxyNext = false
    proxyUntil = 0L
    progressed = false
    contentSinceMetadata = false
    lastMetadata = None
    // A Read that does not block is answered at once, so silence is a dead connection.
    val idle = if (blocking) 0L else config.rpcTimeout.toMillis
    stream = new ReadStream(client.channels(endpoint), request, ReadStream.Ahead, idle)
  }

  private def onContent(r: ReadResponse): Unit = {
    if (r.offset != next_)
      throw new GazetteException(s"Read of journal $journal via $endpoint returned offset ${r.offset}, wanted $next_")
    bytesFromBrokers_ += r.content.size()
    contentSinceMetadata = true
    minted = 0
    deliver(Chunk(r.offset, r.content))
  }

  private def deliver(c: Chunk): Unit = {
    redirects = 0
    refusals.reset()
    pending = c
    next_ = c.end
    progressed = true
    backoff.reset()
  }

  private def onMetadata(r: ReadResponse): Unit = {
    client.routes.learnFrom(journal, r.header)
    r.status match {
      case Status.OK =>
        if (r.fragment.exists(_.backingStore.nonEmpty)) persistedAt = Some(r)
        writeHead_ = r.writeHead
        if (r.offset > next_) {
          if (next_ >= 0) log.warn(s"journal $journal: offset jumped from $next_ to ${r.offset}")
          next_ = r.offset
        }
        lastMetadata = Some(r)
        contentSinceMetadata = false
        notFound = 0
      case Status.OFFSET_NOT_YET_AVAILABLE =>
        writeHead_ = r.writeHead
        if (next_ < 0) next_ = r.offset
        finish()
      // A broker that is no replica of the journal answers so to a Read it must not proxy
      // (do_not_proxy), naming the journal's route: following it is no failure.
      case Status.NOT_JOURNAL_BROKER if redirects < MaxRedirects && client.routes.endpoint(journal) != endpoint =>
        redirects += 1
        closeStream()
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

  // A broker ends a stream at fragment boundaries it does not hold (with do_not_proxy: right
  // after the fragment's metadata and signed URL), at `endOffset`, on shutdown, and when the
  // route changes: each resumes with a new Read, or with the fragment read from its store.
  private def onEnd(): Unit = {
    val persisted = lastMetadata.filter(m =>
      streamDirect && !contentSinceMetadata && m.fragmentUrl.nonEmpty && m.fragment.exists(f =>
        f.begin <= next_ && next_ < f.end))
    closeStream()
    persisted match {
      case Some(m) =>
        FragmentReader.access(m.fragmentUrl, config.fragmentRoot, config.directFragmentReads) match {
          case Some(FragmentReader.FromUrl) =>
            health.admit(StoreHealth.storeOf(m.fragmentUrl)) match {
              case Some(probe) =>
                directProbe = probe
                openDirect(FragmentReader.FromUrl, m)
              case None =>
                // The store failed lately and is not due another try: a broker serves the fragment.
                fallbacks += 1
                proxyNext = true
                proxyUntil = m.getFragment.end
            }
          case Some(access) =>
            directProbe = 0L
            openDirect(access, m)
          case None =>
            askDirect = false
            proxyNext = true
        }
      case None if cutAtExpiry() =>
      case None if !progressed =>
        pause(new GazetteException(s"Read of journal $journal via $endpoint ended without progress at $next_"))
      case None =>
    }
  }

  private def openDirect(access: FragmentReader.Access, m: ReadResponse): Unit = {
    val until = if (endOffset > 0) endOffset else m.getFragment.end
    val timeoutMs = math.min(Int.MaxValue.toLong, config.rpcTimeout.toMillis).toInt
    directStore = if (access == FragmentReader.FromUrl) StoreHealth.storeOf(m.fragmentUrl) else null
    directConfirmed = false
    try {
      direct = FragmentReader.open(access, m.fragmentUrl, m.getFragment, next_, until, timeoutMs)
      fromStore += 1
    } catch {
      // Signed URLs live a minute: a Read mints a fresh one, once per fragment.
      case e: FragmentUrl.Expired if minted == 0 =>
        storeFailed(e)
        minted += 1
        log.debug(s"journal $journal: ${e.getMessage}; asking a broker for a fresh URL")
      case NonFatal(e) =>
        storeFailed(e)
        e match {
          case x: FragmentUrl.Expired => refused = Some(m.getFragment -> x.status)
          case _ =>
        }
        fallBack(e)
      case e: Throwable =>
        storeFailed(e)
        throw e
    }
    if (direct == null) directStore = null
  }

  private def confirmStore(): Unit =
    if (directStore != null && !directConfirmed) {
      health.succeeded(directStore)
      directConfirmed = true
    }

  /** Reports the store's part in `e`: an outage when it did not connect, answer or go on sending
    * in time, or answered 5xx; otherwise nothing about the store, whose probe (if this was one)
    * ends without a verdict.
    */
  private def storeFailed(e: Throwable): Unit =
    if (directStore != null) {
      if (FragmentUrl.storeFailing(e)) health.failed(directStore, e.getMessage)
      else if (!directConfirmed) health.released(directStore, directProbe)
    }

  private def closeDirect(): Unit = {
    if (directStore != null && !directConfirmed) health.released(directStore, directProbe)
    directStore = null
    try direct.close()
    catch { case NonFatal(_) => }
    direct = null
  }

  private def fallBack(e: Throwable): Unit = {
    fallbacks += 1
    minted = 0
    // A failure found once the fragment's every byte was delivered (bytes past its end) leaves a
    // broker nothing of it to serve: the next fragment is asked of the store again.
    proxyUntil = lastMetadata.flatMap(_.fragment).fold(0L)(_.end)
    proxyNext = proxyUntil == 0 || proxyUntil > next_
    val store = lastMetadata.map(m => StoreHealth.storeOf(m.fragmentUrl)).getOrElse("")
    val message = s"reading journal $journal at offset $next_ from its fragment store failed; a broker serves " +
      s"the fragment instead (further failures of store $store are logged at DEBUG): ${e.getMessage}"
    if (warnedStores.add(store)) log.warn(message) else log.debug(message)
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
        case _ =>
          storeTrouble(cause) match {
            case Some((store, outage)) => throw new StoreUnavailableException(
                "Read", journal, endpoint, s" at offset $next_", store, outage, cause, config.retryTimeout)
            case None => throw new BrokerUnavailableException(
                "Read", journal, endpoint, s" at offset $next_", cause, config.retryTimeout)
          }
      }
    } else if (backoff.attempts == 1 && cause != null) {
      log.info(s"retrying Read of $journal at offset $next_ after: ${cause.getMessage}")
    }

  /** The store to blame, and how, when reading stopped in one of its persisted fragments: a
    * broker that answers, but with an error, while this JVM saw the store fail lately or could not
    * read it directly; or a broker that went silent serving a fragment of a store this JVM saw
    * failing (GCS's and Azure's SDKs retry a store that is down for minutes, answering nothing
    * meanwhile). A broker that cannot be reached, or refuses the caller, is the broker's.
    */
  private def storeTrouble(cause: Throwable): Option[(String, String)] = {
    val (brokerFailedRead, brokerSilent) = cause match {
      case e: StatusRuntimeException if !GrpcFailures.connectionLost(e) =>
        val code = e.getStatus.getCode
        (code == io.grpc.Status.Code.UNKNOWN || code == io.grpc.Status.Code.INTERNAL,
          code == io.grpc.Status.Code.DEADLINE_EXCEEDED)
      case _ => (false, false)
    }
    def outageOf(m: ReadResponse) =
      Option(m.fragmentUrl).filter(_.nonEmpty).flatMap(u => health.outage(StoreHealth.storeOf(u)))
    persistedAt
      .filter(m => m.getFragment.begin <= next_ && next_ < m.getFragment.end)
      .filter(m => brokerFailedRead || brokerSilent && outageOf(m).nonEmpty)
      .filter(m => m.getFragment.modTime > 0 || m.fragmentUrl.nonEmpty)
      .map { m =>
        val failing = outageOf(m)
        val range = s"[${m.getFragment.begin}, ${m.getFragment.end})"
        m.getFragment.backingStore ->
          (refused.filter(_._1 == m.getFragment) match {
            case Some((_, status)) => s"refused the URLs a broker signed for fragment $range with HTTP $status"
            case None => failing.fold(s"holds fragment $range") {
                case (since, error) => s"has been failing for ${since.toSeconds max 1}s (last: $error)"
              }
          })
      }
  }

  private def closeStream(): Unit = {
    if (stream != null) stream.cancel()
    stream = null
  }

  private def finish(): Unit = {
    done = true
    closeStream()
    if (direct != null) closeDirect()
  }
}

object JournalReader {
  private val log = LoggerFactory.getLogger(classOf[JournalReader])

  private val MaxRedirects = 3

  // Stores whose failures were logged at WARN, once per JVM: a store that is down fails every
  // fragment of every journal in it.
  private val warnedStores = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()
}
