package io.sparkgazette.testing

import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.net.{InetSocketAddress, URI}
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._

import com.sun.net.httpserver.{HttpExchange, HttpServer}

/** A faulty network hop in front of a real S3 server: journals whose store names this proxy's
  * endpoint have their fragments signed for it, so readers' GETs of signed URLs come through here,
  * where a test makes the next ones refused or cut short. The brokers' own calls (signed with an
  * Authorization header, not in the query) always pass.
  */
final class StoreProxy(target: String) extends AutoCloseable {
  private val http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
  private val server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0)
  private val refusals = new AtomicInteger()
  @volatile private var refusalStatus = 403
  private val cuts = new AtomicInteger()
  @volatile private var cutAfter = 0

  @volatile private var holding = false
  @volatile private var stalling = false
  private val held = new java.util.concurrent.CountDownLatch(1)

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
    s"http://127.0.0.1:${server.getAddress.getPort}"
  }

  /** The next `n` signed GETs are answered with `status` and no fragment. */
  def refuseNext(n: Int, status: Int = 403): Unit = { refusalStatus = status; refusals.set(n) }

  /** The next `n` signed GETs announce the whole fragment and send only its first `bytes`. */
  def cutNext(n: Int, bytes: Int): Unit = { cutAfter = bytes; cuts.set(n) }

  /** From now on signed GETs are accepted and never answered, as by a store whose network drops
    * them, until the proxy is closed.
    */
  def blackHole(): Unit = holding = true

  /** From now on signed GETs are answered 200 with the fragment's length, and then nothing more,
    * as by a store whose disks or backend hang, until the proxy is closed.
    */
  def stallBodies(): Unit = stalling = true

  private def take(counter: AtomicInteger): Boolean = counter.getAndUpdate(n => math.max(0, n - 1)) > 0

  private def handle(x: HttpExchange): Unit =
    try {
      val uri = x.getRequestURI
      val signed = x.getRequestMethod == "GET" && Option(uri.getRawQuery).exists(_.contains("X-Amz-Signature"))
      if (signed) signedGets.incrementAndGet()
      if (signed && holding) {
        heldGets.incrementAndGet()
        held.await()
      } else if (signed && stalling) {
        heldGets.incrementAndGet()
        x.sendResponseHeaders(200, 4096)
        x.getResponseBody.flush()
        held.await()
      } else if (signed && take(refusals)) {
        val body = "<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>".getBytes
        x.sendResponseHeaders(refusalStatus, body.length)
        x.getResponseBody.write(body)
      } else {
        val request = HttpRequest.newBuilder(URI.create(target + uri.getRawPath + Option(uri.getRawQuery).fold("")(
            "?" + _)))
        x.getRequestHeaders.asScala.foreach { case (k, vs) =>
          if (!StoreProxy.Restricted(k.toLowerCase)) vs.asScala.foreach(v => request.header(k, v))
        }
        val in = x.getRequestBody.readAllBytes()
        request.method(x.getRequestMethod, HttpRequest.BodyPublishers.ofByteArray(in))
        val r = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray())
        r.headers().map().asScala.foreach { case (k, vs) =>
          if (!StoreProxy.Restricted(k.toLowerCase) && k != ":status")
            vs.asScala.foreach(x.getResponseHeaders.add(k, _))
        }
        val body = r.body()
        val length = if (x.getRequestMethod == "HEAD" || body.isEmpty) -1 else body.length.toLong
        x.sendResponseHeaders(r.statusCode(), length)
        if (length > 0) {
          val out = x.getResponseBody
          if (signed && r.statusCode() / 100 == 2 && take(cuts)) out.write(body, 0, cutAfter)
          else out.write(body)
        }
      }
    } catch { case _: java.io.IOException => }
    finally x.close()

  override def close(): Unit = {
    held.countDown()
    server.stop(0)
  }
}

private object StoreProxy {
  private val Restricted = Set("host", "connection", "content-length", "expect", "upgrade", "transfer-encoding",
    "date", "keep-alive")
}
