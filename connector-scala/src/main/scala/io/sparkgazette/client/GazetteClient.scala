package io.sparkgazette.client

import java.util.concurrent.{
  ConcurrentHashMap, ConcurrentLinkedQueue, CountDownLatch, Semaphore, TimeUnit, TimeoutException
}

import scala.annotation.tailrec
import scala.concurrent.duration._

import com.google.protobuf.ByteString
import io.grpc.StatusRuntimeException
import io.grpc.stub.StreamObserver
import io.sparkgazette.client.protocol._
import org.slf4j.LoggerFactory

/** A client of Gazette's broker API: List, Apply, Read, Append and ListFragments, routed to the
  * journal's brokers when their route is known and retried the way Gazette's Go client does.
  *
  * Thread-safe; channels are pooled per broker endpoint. Close it to release them.
  */
final class GazetteClient(val config: ClientConfig) extends AutoCloseable {
  import GazetteClient._

  private[client] val tokens = auth.TokenSource(config.credentials)
  private[client] val channels =
    new Channels(config.tls, Some(tokens).filter(_.credentials != auth.Credentials.Anonymous))
  private[client] val routes = new Routes(config.brokers)

  /** Every journal matching `selector`, with its spec and current route. */
  def list(selector: LabelSelector): Seq[ListResponse.Journal] = {
    val text = Selector.render(selector)
    val journals = withRetries("List", s"selector '$text'")(endpoint => Right(listAt(endpoint, selector, text)))
    journals.foreach(j => routes.learn(j.getSpec.name, j.route))
    journals
  }

  /** [[list]] of a selector in Gazette's string syntax. */
  def list(selector: String): Seq[ListResponse.Journal] = list(Selector.parse(selector))

  /** `journal`'s fragment stores, as `endpoint` lists its spec in one attempt (within the RPC
    * timeout, no retry); None where it does not answer.
    */
  private[client] def storesOnce(journal: String, endpoint: String): Option[Seq[String]] =
    scala.util.Try(listAt(endpoint, Selector.parse(s"name=$journal"), journal)
        .flatMap(_.spec).flatMap(_.fragment).flatMap(_.stores)).toOption

  // One List attempt at `endpoint`, every page of its answer.
  private def listAt(endpoint: String, selector: LabelSelector, text: String): Seq[ListResponse.Journal] = {
    val stub = JournalGrpc.blockingStub(channels(endpoint)).withDeadlineAfter(rpcMillis, TimeUnit.MILLISECONDS)
    ListResponses.concat(text, endpoint, stub.list(ListRequest(selector = Some(selector))))
  }

  /** Applies `changes` in one Etcd transaction and returns its revision. */
  def apply(changes: Seq[ApplyRequest.Change]): Long = {
    val all = changes.map(c => if (c.delete.nonEmpty) c.delete else c.upsert.map(_.name).getOrElse(""))
    val names = if (all.size <= 4) all.mkString(",") else s"${all.take(3).mkString(",")} and ${all.size - 3} more"
    withRetries("Apply", names) { endpoint =>
      val stub = JournalGrpc.blockingStub(channels(endpoint)).withDeadlineAfter(rpcMillis, TimeUnit.MILLISECONDS)
      val r = stub.apply(ApplyRequest(changes))
      if (r.status == Status.OK) Right(r.header.flatMap(_.etcd).map(_.revision).getOrElse(0L)) else Left(r.status)
    }
  }

  /** Creates or replaces `specs`, whatever their current revision. */
  def upsert(specs: JournalSpec*): Long =
    apply(specs.map(s => ApplyRequest.Change(expectModRevision = -1, upsert = Some(s))))

  /** The offset the journal's next append will get, asked of its primary without reading. */
  def writeHead(journal: String): Long =
    metadata(journal, -1, " (write head)") { r =>
      r.status match {
        case Status.OK | Status.OFFSET_NOT_YET_AVAILABLE => Right(r.writeHead)
        case s => Left(s)
      }
    }

  /** The first offset at or after `offset` that the journal still holds (retention may have
    * removed older fragments), asked of the broker without reading; the write head if none. A
    * broker that cannot serve `offset` yet (a primary that has not listed its store, a hole it
    * waits on) is no witness that the bytes are gone: its fragment listing decides (see
    * [[FragmentHoles]]).
    */
  def readableFrom(journal: String, offset: Long = 0): Long = {
    val (at, served) =
      metadata(journal, offset, s" (first offset from $offset)")(r => firstReadable(offset, r).toRight(r.status))
    if (served) at else FragmentHoles.readableFrom(this, journal, offset, at)
  }

  /** [[writeHead]] of many journals at once: the metadata-only Reads go out concurrently (at
    * most `parallelism` in flight) over the shared channels, and a journal whose Read does not
    * answer with a write head is asked again by [[writeHead]], with its retries.
    */
  def writeHeads(journals: Seq[String], parallelism: Int = DefaultParallelism): Map[String, Long] =
    metadataMany(journals, -1L, parallelism)(writeHead) { r =>
      r.status match {
        case Status.OK | Status.OFFSET_NOT_YET_AVAILABLE => Some(r.writeHead)
        case _ => None
      }
    }

  /** [[readableFrom]] of many journals at once, as [[writeHeads]] asks. */
  def readableFromAll(journals: Seq[String], offset: Long = 0, parallelism: Int = DefaultParallelism)
      : Map[String, Long] =
    metadataMany(journals, offset, parallelism)(j => (readableFrom(j, offset), true))(firstReadable(offset, _)).map {
      case (j, (at, served)) => j -> (if (served) at else FragmentHoles.readableFrom(this, j, offset, at))
    }

  /** What a metadata Read at `offset` says of the first offset the journal holds from there, and
    * whether the broker served it (false: it answered with the write head, not yet able to).
    */
  private def firstReadable(offset: Long, r: ReadResponse): Option[(Long, Boolean)] = r.status match {
    case Status.OK => Some((math.max(offset, r.offset), true))
    case Status.OFFSET_NOT_YET_AVAILABLE => Some((r.writeHead, false))
    case _ => None
  }

  private def metadataMany[T](journals: Seq[String], offset: Long, parallelism: Int)(one: String => T)(
      result: ReadResponse => Option[T]): Map[String, T] = {
    val permits = new Semaphore(parallelism)
    val results = new ConcurrentHashMap[String, T]()
    val again = new ConcurrentLinkedQueue[String]()
    val latch = new CountDownLatch(journals.size)
    // The token for all of them; one that cannot be had fails each journal's retry, naming it.
    scala.util.Try(tokens.current())
    journals.foreach { j =>
      permits.acquire()
      val observer = new StreamObserver[ReadResponse] {
        @volatile private var first: Option[ReadResponse] = None
        override def onNext(r: ReadResponse): Unit = if (first.isEmpty) first = Some(r)
        override def onError(t: Throwable): Unit = done(None)
        override def onCompleted(): Unit = done(first)
        private def done(r: Option[ReadResponse]): Unit = {
          try {
            r.foreach(x => routes.learnFrom(j, x.header))
            r.flatMap(result) match {
              case Some(v) => results.put(j, v)
              case None => again.add(j)
            }
          } finally { permits.release(); latch.countDown() }
        }
      }
      try {
        JournalGrpc.stub(channels(routes.endpoint(j))).withDeadlineAfter(rpcMillis, TimeUnit.MILLISECONDS)
          .read(ReadRequest(journal = j, offset = offset, metadataOnly = true), observer)
      } catch { case e: RuntimeException => observer.onError(e) }
    }
    latch.await()
    again.forEach(j => results.put(j, one(j)))
    journals.map(j => j -> results.get(j)).toMap
  }

  /** Creates or replaces `specs` and waits until each journal is assigned to enough brokers and
    * answers with a write head, so that appends can follow at once.
    */
  def upsertAndAwait(specs: Seq[JournalSpec], timeout: FiniteDuration = 60.seconds): Unit = {
    specs.grouped(64).foreach(group => upsert(group: _*)) // etcd caps operations per transaction
    val deadline = timeout.fromNow
    specs.foreach { s =>
      while (list(s"name=${s.name}").forall(_.route.forall(r => r.primary < 0 || r.members.size < s.replication))) {
        if (deadline.isOverdue())
          throw new GazetteException(s"journal ${s.name} was not assigned to brokers within $timeout")
        Thread.sleep(50)
      }
      writeHead(s.name)
    }
  }

  // One metadata-only Read: the broker's view of the journal at `offset`, without content.
  private def metadata[T](journal: String, offset: Long, what: String)(result: ReadResponse => Either[Status, T]): T =
    withRetries("Read", journal, what) { endpoint =>
      val request = ReadRequest(journal = journal, offset = offset, metadataOnly = true)
      val stub = JournalGrpc.blockingStub(channels(endpoint)).withDeadlineAfter(rpcMillis, TimeUnit.MILLISECONDS)
      val responses = stub.read(request)
      if (!responses.hasNext) throw new GazetteException(s"Read of journal $journal via $endpoint: no response")
      val r = responses.next()
      routes.learnFrom(journal, r.header)
      result(r)
    }

  /** Reads `[offset, endOffset)` of `journal` (`endOffset` 0: no end; `offset` -1: the write
    * head). A non-blocking read ends at the write head; a blocking one waits for appends.
    */
  def read(journal: String, offset: Long, endOffset: Long = 0, block: Boolean = false): JournalReader = {
    require(offset >= -1, s"offset of journal $journal must be >= -1, not $offset")
    require(endOffset == 0 || endOffset >= offset, s"endOffset $endOffset of journal $journal is before offset $offset")
    new JournalReader(this, journal, offset, endOffset, block)
  }

  /** Appends `content` atomically: all of it lands contiguously at the write head, or none does.
    * Returns the committed fragment, whose `[begin, end)` are the offsets the content took.
    *
    * Like every Gazette write, this is at-least-once: when an attempt's outcome is unknown (the
    * broker may have committed it), the retry can write the content twice.
    */
  def append(journal: String, content: ByteString): Fragment =
    append(journal, content, AppendRequest(journal = journal))

  /** [[append]] with the journal's registers: `first` carries `check_registers` (the append
    * fails with REGISTER_MISMATCH, not retried, unless they match) and the registers to add or
    * remove once it commits. Each attempt may take `rpcTimeout` plus a second per MiB.
    */
  def append(journal: String, content: ByteString, first: AppendRequest): Fragment =
    withRetries("Append", journal) { endpoint =>
      val timeout = config.rpcTimeout + (content.size.toLong >> 20).seconds
      val r = Append.attempt(channels(endpoint), first.withJournal(journal), content, config.appendChunkSize, timeout)
      routes.learnFrom(journal, r.header)
      if (r.status == Status.OK) Right(r.getCommit) else Left(r.status)
    }

  def append(journal: String, content: Array[Byte]): Fragment = append(journal, ByteString.copyFrom(content))

  /** Fragments of `journal` (persisted and local), in offset order, across every page. */
  def listFragments(journal: String, beginModTime: Long = 0, endModTime: Long = 0): Seq[FragmentsResponse._Fragment] = {
    @tailrec def pages(token: Long, acc: Vector[FragmentsResponse._Fragment]): Vector[FragmentsResponse._Fragment] = {
      val r = withRetries("ListFragments", journal) { endpoint =>
        val stub = JournalGrpc.blockingStub(channels(endpoint)).withDeadlineAfter(rpcMillis, TimeUnit.MILLISECONDS)
        val r = stub.listFragments(FragmentsRequest(
            journal = journal, beginModTime = beginModTime, endModTime = endModTime, nextPageToken = token))
        routes.learnFrom(journal, r.header)
        if (r.status == Status.OK) Right(r) else Left(r.status)
      }
      if (r.nextPageToken == 0) acc ++ r.fragments else pages(r.nextPageToken, acc ++ r.fragments)
    }
    pages(0, Vector.empty)
  }

  override def close(): Unit = channels.close()

  private def rpcMillis: Long = config.rpcTimeout.toMillis

  /** The token for the next call of `rpc`, from the client's credentials. */
  private[client] def token(rpc: String, journal: String, where: String, endpoint: String): Option[auth.Token] =
    try tokens.current()
    catch {
      case e: auth.TokenUnavailableException =>
        throw new AuthTokenException(
          rpc, journal, endpoint, where, config.credentials, false, None, false, e.getMessage,
          e)
    }

  /** The failure of `rpc` once brokers refused its token for good (`e`: their last answer). */
  private[client] def refused(rpc: String, journal: String, where: String, endpoint: String, token: Option[auth.Token],
      expired: Boolean, e: StatusRuntimeException): AuthTokenException =
    new AuthTokenException(
      rpc,
      journal,
      endpoint,
      where,
      config.credentials,
      token.isDefined,
      token.flatMap(_.expiry),
      expired,
      s"${e.getStatus.getCode}: ${Option(e.getStatus.getDescription).getOrElse("")}",
      e
    )

  /** What to do after brokers refused `used`, as [[auth.Refusals]] decides; renewing that fails is
    * the RPC's failure. A refusal that is retried is logged (its token's exp, never the token): an
    * operator sees how often tokens arrive late, or keys are retired before their tokens.
    */
  private[client] def afterRefusal(refusals: auth.Refusals, rpc: String, journal: String, where: String,
      endpoint: String, used: Option[auth.Token]): auth.Refusals.Next = {
    val next =
      try refusals.refused(used)
      catch {
        case e: auth.TokenUnavailableException =>
          throw new AuthTokenException(
            rpc, journal, endpoint, where, config.credentials, false, None, false, e.getMessage,
            e)
      }
    val exp = used.flatMap(_.expiry).fold("no exp claim")(e => s"exp $e")
    next match {
      case auth.Refusals.RetryNow =>
        log.info(s"broker $endpoint refused the bearer token ($exp) for $rpc of $journal$where: trying a renewed one")
      case auth.Refusals.RetryLater(_) =>
        log.info(
          s"broker $endpoint refused the bearer token ($exp) for $rpc of $journal$where: waiting for its renewal")
      case _: auth.Refusals.GiveUp =>
    }
    next
  }

  /** Runs `attempt` against the journal's endpoint until it answers OK, a status that retrying
    * cannot fix, or the retry timeout; transport failures and routing statuses are retried, and a
    * refused token is renewed ([[auth.Refusals]]).
    */
  private def withRetries[T](rpc: String, journal: String, where: String = "")(
      attempt: String => Either[Status, T]): T = {
    val backoff = new Backoff(config.retryTimeout)
    val refusals = new auth.Refusals(tokens)
    var notFound = 0
    while (true) {
      val endpoint = routes.endpoint(journal)
      val used = token(rpc, journal, where, endpoint)
      val failure: Throwable =
        try {
          attempt(endpoint) match {
            case Right(v) => return v
            case Left(Status.JOURNAL_NOT_FOUND) if rpc == "Read" && notFound < 2 =>
              notFound += 1 // Etcd may not have propagated a new journal to this broker yet.
              new BrokerStatusException(rpc, journal, Status.JOURNAL_NOT_FOUND, endpoint, where)
            case Left(s) if Retryable(s) => new BrokerStatusException(rpc, journal, s, endpoint, where)
            case Left(s) => throw new BrokerStatusException(rpc, journal, s, endpoint, where)
          }
        } catch {
          case e: StatusRuntimeException if GrpcFailures.unauthenticated(e) =>
            afterRefusal(refusals, rpc, journal, where, endpoint, used) match {
              case auth.Refusals.RetryNow => null
              case auth.Refusals.RetryLater(_) => e
              case auth.Refusals.GiveUp(t, expired) => throw refused(rpc, journal, where, endpoint, t, expired, e)
            }
          case e: StatusRuntimeException if GrpcFailures.retryable(e) => e
          case e: TimeoutException => e
          // An interrupt is how Spark stops a query: it must read as one, not as a failed RPC.
          case e: StatusRuntimeException if e.getCause.isInstanceOf[InterruptedException] =>
            val i = new InterruptedException(s"$rpc of journal $journal$where was interrupted")
            i.initCause(e)
            throw i
          case e: StatusRuntimeException =>
            throw new GazetteException(s"$rpc of journal $journal$where via $endpoint failed: ${e.getStatus}", e)
        }
      // null: a renewed token, tried at once.
      if (failure != null) {
        // A refused token is no fault of the route.
        failure match {
          case e: StatusRuntimeException if GrpcFailures.unauthenticated(e) =>
          case _ => routes.failed(journal, endpoint)
        }
        // gRPC's own reconnect backoff grows to minutes: the next attempt, at this schedule's pace,
        // should find a broker that has come back.
        failure match {
          case e: StatusRuntimeException if GrpcFailures.connectionLost(e) =>
            channels(endpoint).resetConnectBackoff()
          case _ =>
        }
        if (backoff.attempts == 0) log.info(s"retrying $rpc of $journal$where after: ${failure.getMessage}")
        if (!backoff.pause()) failure match {
          case e: BrokerStatusException => throw e
          case e: StatusRuntimeException if GrpcFailures.unauthenticated(e) =>
            throw refused(rpc, journal, where, endpoint, tokens.latest, true, e)
          case e => throw new BrokerUnavailableException(rpc, journal, endpoint, where, e, config.retryTimeout)
        }
      }
    }
    throw new IllegalStateException("unreachable")
  }
}

object GazetteClient {
  private val log = LoggerFactory.getLogger(classOf[GazetteClient])

  /** How many metadata Reads [[GazetteClient.writeHeads]] keeps in flight. */
  val DefaultParallelism = 128

  /** Statuses that a later attempt, possibly at another broker, can succeed past. */
  private val Retryable: Set[Status] = Set(
    Status.NO_JOURNAL_PRIMARY_BROKER,
    Status.NOT_JOURNAL_PRIMARY_BROKER,
    Status.INSUFFICIENT_JOURNAL_BROKERS,
    Status.NOT_JOURNAL_BROKER,
    Status.WRONG_ROUTE
  )

  def apply(brokers: String): GazetteClient = new GazetteClient(ClientConfig(brokers))
}
