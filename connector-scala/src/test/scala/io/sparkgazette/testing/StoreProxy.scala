package io.sparkgazette.testing

import java.io.ByteArrayOutputStream
import java.net.{InetSocketAddress, Socket, URI}
import java.nio.charset.StandardCharsets.ISO_8859_1
import java.util.concurrent.atomic.AtomicInteger
import javax.net.ssl.HttpsURLConnection

import scala.jdk.CollectionConverters._

import com.sun.net.httpserver.{HttpExchange, HttpServer, HttpsConfigurator, HttpsServer}

/** A faulty network hop in front of a real S3 server: journals whose store names this proxy's
  * endpoint have their fragments signed for it, so readers' GETs of signed URLs come through here,
  * where a test makes the next ones refused or cut short. The brokers' own calls (signed with an
  * Authorization header, not in the query) always pass.
  *
  * Requests go on as they came, their Host header (this proxy's address) included: a signature
  * covers the host a URL was signed for, so the server checks each one as it was signed.
  *
  * In front of a cloud store's emulator ([[StoreProxy.inFrontOf]]), whose URLs name the cloud host
  * whatever the proxy, the proxy serves that host's TLS on port 443 of a loopback address of its
  * own, and this JVM resolves the host to it (the brokers still reach the emulator itself).
  */
final class StoreProxy private (upstream: URI, cloud: Option[CloudStoreAccess.Emulator]) extends AutoCloseable {
  def this(target: String) = this(URI.create(target), None)

  private val server: HttpServer = cloud match {
    case None => HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0)
    case Some(e) =>
      val s = HttpsServer.create(new InetSocketAddress(StoreProxy.loopbackAddress(), 443), 0)
      s.setHttpsConfigurator(new HttpsConfigurator(CloudStoreAccess.serverContext(e)))
      s
  }
  private val refusals = new AtomicInteger()
  @volatile private var refusalStatus = 403
  private val cuts = new AtomicInteger()
  @volatile private var cutAfter = 0

  @volatile private var holding = false
  @volatile private var stalling = false
  private val held = new java.util.concurrent.CountDownLatch(1)

  /** The brokers' listings held by [[holdLists]]. */
  val heldLists = new AtomicInteger()

  /** Signed GETs that came through, faulty or not. */
  val signedGets = new AtomicInteger()

  /** Signed GETs answered with nothing, or with headers only, while [[blackHole]] or
    * [[stallBodies]] was on.
    */
  val heldGets = new AtomicInteger()

  val endpoint: String = {
    server.createContext("/", (x: HttpExchange) => handle(x))
    server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool())
    server.start()
    val at = server.getAddress
    s"${if (cloud.isEmpty) "http" else "https"}://${at.getAddress.getHostAddress}:${at.getPort}"
  }

  /** GETs answered with [[refuseNext]]'s status. */
  val refused = new AtomicInteger()

  /** The next `n` signed GETs are answered with `status` and no fragment. */
  def refuseNext(n: Int, status: Int = 403): Unit = { refusalStatus = status; refusals.set(n) }

  /** The next `n` signed GETs announce the whole fragment and send only its first `bytes`. */
  def cutNext(n: Int, bytes: Int): Unit = { cutAfter = bytes; cuts.set(n) }

  /** GETs still to be answered with [[alterNext]]'s body. */
  val alterations = new AtomicInteger()
  @volatile private var alteration: Array[Byte] => Array[Byte] = identity

  /** The next `n` signed GETs answered 2xx send `alter` of the object's bytes instead, with its
    * length: a store or a hop that answers 200 with a body other than the object's.
    */
  def alterNext(n: Int)(alter: Array[Byte] => Array[Byte]): Unit = { alteration = alter; alterations.set(n) }

  /** From now on signed GETs are accepted and never answered, as by a store whose network drops
    * them, until the proxy is closed.
    */
  def blackHole(): Unit = holding = true

  /** From now on signed GETs are answered 200 (a chunked body), and then nothing more,
    * as by a store whose disks or backend hang, until the proxy is closed.
    */
  def stallBodies(): Unit = stalling = true

  @volatile private var listsHeld: Option[java.util.concurrent.CountDownLatch] = None

  /** From now on the brokers' listings of the store wait, unanswered, until [[releaseLists]]: as
    * for a broker that has not yet listed its store.
    */
  def holdLists(): Unit = listsHeld = Some(new java.util.concurrent.CountDownLatch(1))

  /** The held listings go on, and later ones pass. */
  def releaseLists(): Unit = { listsHeld.foreach(_.countDown()); listsHeld = None }

  private def take(counter: AtomicInteger): Boolean = counter.getAndUpdate(n => math.max(0, n - 1)) > 0

  private def handle(x: HttpExchange): Unit =
    try {
      val uri = x.getRequestURI
      // S3's X-Amz-Signature, GCS's Signature (V2) or X-Goog-Signature (V4), Azure's SAS sig.
      val signed = x.getRequestMethod == "GET" &&
        Option(uri.getRawQuery).exists(q => q.contains("Signature=") || q.contains("sig="))
      if (signed) signedGets.incrementAndGet()
      val listing = !signed && x.getRequestMethod == "GET" && Option(uri.getRawQuery).exists(_.contains("prefix="))
      if (listing) listsHeld.foreach { l => heldLists.incrementAndGet(); l.await() }
      if (signed && holding) {
        heldGets.incrementAndGet()
        held.await()
      } else if (signed && stalling) {
        heldGets.incrementAndGet()
        // Chunked: a length other than the object's would be refused before any byte is awaited.
        x.sendResponseHeaders(200, 0)
        x.getResponseBody.flush()
        held.await()
      } else if (signed && take(refusals)) {
        refused.incrementAndGet()
        val body = (if (refusalStatus == 429 || refusalStatus >= 500)
                      "<Error><Code>ServerBusy</Code><Message>Please reduce your request rate</Message></Error>"
                    else "<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>").getBytes
        closing(x)
        x.sendResponseHeaders(refusalStatus, body.length)
        x.getResponseBody.write(body)
      } else {
        val (status, headers, answered) = forward(x)
        val body = if (signed && status / 100 == 2 && take(alterations)) alteration(answered) else answered
        headers.foreach { case (k, v) => if (!StoreProxy.Restricted(k.toLowerCase)) x.getResponseHeaders.add(k, v) }
        closing(x)
        val length = if (x.getRequestMethod == "HEAD" || body.isEmpty) -1 else body.length.toLong
        x.sendResponseHeaders(status, length)
        if (length > 0) {
          val out = x.getResponseBody
          if (signed && status / 100 == 2 && take(cuts)) out.write(body, 0, cutAfter)
          else out.write(body)
        }
      }
    } catch { case _: java.io.IOException => }
    finally x.close()

  /** The server's answer to the request as it came (over a connection of its own, which the server
    * closes after answering): its status, headers and body.
    */
  private def forward(x: HttpExchange): (Int, Seq[(String, String)], Array[Byte]) = {
    val uri = x.getRequestURI
    val in = x.getRequestBody.readAllBytes()
    val target = uri.getRawPath + Option(uri.getRawQuery).fold("")("?" + _)
    val head = new StringBuilder(s"${x.getRequestMethod} $target HTTP/1.1\r\n")
    x.getRequestHeaders.asScala.foreach { case (k, vs) =>
      if (!StoreProxy.HopByHop(k.toLowerCase)) vs.asScala.foreach(v => head.append(s"$k: $v\r\n"))
    }
    if (in.nonEmpty || x.getRequestHeaders.containsKey("Content-Length"))
      head.append(s"Content-Length: ${in.length}\r\n")
    head.append("Connection: close\r\n\r\n")
    val socket = cloud match {
      case None => new Socket(upstream.getHost, upstream.getPort)
      case Some(e) =>
        // The emulator's TLS as the cloud host's (SNI), trusted as this JVM trusts it.
        HttpsURLConnection.getDefaultSSLSocketFactory.createSocket(new Socket(e.address, 443), e.host, 443, true)
    }
    val response =
      try {
        socket.getOutputStream.write(head.toString.getBytes(ISO_8859_1) ++ in)
        socket.getInputStream.readAllBytes()
      } finally socket.close()
    // Interim answers (100 Continue, to an Expect header) come first.
    def parse(at: Int): (Int, Seq[(String, String)], Array[Byte]) = {
      val end = response.indexOfSlice("\r\n\r\n".getBytes(ISO_8859_1), at)
      val lines = new String(response, at, end - at, ISO_8859_1).split("\r\n").toSeq
      val status = lines.head.split(' ')(1).toInt
      val headers = lines.tail.map(l => l.takeWhile(_ != ':').trim -> l.dropWhile(_ != ':').drop(1).trim)
      if (status / 100 == 1) parse(end + 4)
      else if (headers.exists(h => h._1.equalsIgnoreCase("transfer-encoding") && h._2.equalsIgnoreCase("chunked")))
        (status, headers, StoreProxy.dechunked(response, end + 4))
      else (status, headers, response.drop(end + 4))
    }
    parse(0)
  }

  /** A cloud emulator's proxy ends each connection with its answer: none is kept alive to it once
    * the host resolves to the emulator again.
    */
  private def closing(x: HttpExchange): Unit = if (cloud.nonEmpty) x.getResponseHeaders.set("Connection", "close")

  override def close(): Unit = {
    cloud.foreach(e => CloudStoreAccess.route(e.host, e.address))
    held.countDown()
    releaseLists()
    server.stop(0)
  }
}

object StoreProxy {

  /** A proxy in front of `e`, the cloud store's emulator, to which this JVM's requests to the
    * cloud host go until it is closed.
    */
  def inFrontOf(e: CloudStoreAccess.Emulator): StoreProxy = {
    val proxy = new StoreProxy(URI.create(s"https://${e.host}"), Some(e))
    CloudStoreAccess.route(e.host, URI.create(proxy.endpoint).getHost)
    proxy
  }

  private def loopbackAddress(): String = {
    val r = scala.util.Random
    s"127.${64 + r.nextInt(186)}.${1 + r.nextInt(249)}.${2 + r.nextInt(248)}"
  }

  /** The body of a chunked answer from `at`, its chunks joined. */
  private def dechunked(response: Array[Byte], at: Int): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    var i = at
    var size = -1
    while (size != 0) {
      val eol = response.indexOfSlice("\r\n".getBytes(ISO_8859_1), i)
      size = Integer.parseInt(new String(response, i, eol - i, ISO_8859_1).takeWhile(_ != ';').trim, 16)
      out.write(response, eol + 2, size)
      i = eol + 2 + size + 2
    }
    out.toByteArray
  }

  /** Headers of one hop, not forwarded: the proxy's own connection to the server has its own. */
  private val HopByHop = Set("connection", "content-length", "keep-alive", "transfer-encoding", "upgrade")

  /** Answer headers the proxy's HTTP server sets itself. */
  private val Restricted = HopByHop + "date"
}
