package io.sparkgazette.client

import java.io.InputStream
import java.net.{HttpURLConnection, URI}
import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Try

import io.sparkgazette.client.protocol.{CompressionCodec, Fragment}

/** A GET of a persisted fragment through the signed URL a broker handed out, as Gazette's own
  * readers fetch them: plain HTTP/1.1 (Gazette's client turned HTTP/2 off after broken
  * connections kept being reused), no store SDK, no credentials: the signature is the grant.
  */
private[client] object FragmentUrl {

  /** How long a store may take to accept a connection. A store's connections open in
    * milliseconds: one that takes seconds is down or unreachable, and each wait on it holds up
    * a task (the time to answer is still bounded by the client's RPC timeout).
    */
  private val ConnectTimeoutMs = 5000

  /** The store refused the URL as no longer (or not) valid: a new Read mints a fresh one. */
  final class Expired(val url: String, val status: Int)
      extends GazetteException(s"the fragment store answered HTTP $status to ${redacted(url)}")

  /** The store did not answer, or answered that it is failing (HTTP 5xx or 429): trouble of the
    * store's, not of the fragment's ([[StoreHealth]]).
    */
  final class Unavailable(val url: String, message: String, cause: Throwable = null)
      extends GazetteException(message, cause)

  /** Whether `e` says the store itself is failing: it did not answer ([[Unavailable]]), or it
    * stopped sending within the read timeout. A body cut short or a fragment that does not decode
    * is that transfer's or that fragment's trouble.
    */
  def storeFailing(e: Throwable): Boolean =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(8).exists {
      case _: Unavailable | _: java.net.SocketTimeoutException => true
      case _ => false
    }

  /** The fragment's bytes as stored, from offset `from` where the store serves ranges (then the
    * second value is `from`) or from the fragment's beginning, and the codec they are in.
    */
  def get(url: String, fragment: Fragment, from: Long, timeoutMs: Int): (InputStream, Long, CompressionCodec) = {
    val codec = fragment.compressionCodec
    val conn = new URI(url).toURL.openConnection().asInstanceOf[HttpURLConnection]
    conn.setConnectTimeout(math.min(timeoutMs, ConnectTimeoutMs))
    conn.setReadTimeout(timeoutMs)
    conn.setInstanceFollowRedirects(true)
    codec match {
      // Bytes the store may decompress for us (GCS's decompressive transcoding): ask it to.
      case CompressionCodec.GZIP_OFFLOAD_DECOMPRESSION => conn.setRequestProperty("Accept-Encoding", "identity")
      case CompressionCodec.GZIP => conn.setRequestProperty("Accept-Encoding", "gzip")
      case _ =>
    }
    // Only an uncompressed fragment can be entered in the middle.
    val skip = from - fragment.begin
    if (codec == CompressionCodec.NONE && skip > 0) conn.setRequestProperty("Range", s"bytes=$skip-")
    val status =
      try conn.getResponseCode
      catch {
        case e: java.io.IOException =>
          conn.disconnect()
          throw new Unavailable(url, s"the fragment store did not answer ${redacted(url)}: $e", e)
        case e: Throwable => conn.disconnect(); throw e
      }
    status match {
      case HttpURLConnection.HTTP_OK | HttpURLConnection.HTTP_PARTIAL =>
        val at =
          if (status != HttpURLConnection.HTTP_PARTIAL) fragment.begin
          else if (rangeStart(conn).contains(skip)) from
          else {
            drain(conn)
            throw new GazetteException(s"the fragment store answered ${redacted(url)} with a range other than " +
              s"bytes=$skip-: ${Option(conn.getHeaderField("Content-Range")).getOrElse("no Content-Range")}")
          }
        val served = codec match {
          case CompressionCodec.GZIP_OFFLOAD_DECOMPRESSION =>
            // Stores that do not transcode (S3, and most that speak its protocol) serve the
            // gzip bytes as they were written.
            if (Option(conn.getContentEncoding).exists(_.equalsIgnoreCase("gzip"))) CompressionCodec.GZIP
            else CompressionCodec.NONE
          case c => c
        }
        // Closing the body returns the connection to the JDK's keep-alive cache.
        (conn.getInputStream, at, served)
      case 400 | HttpURLConnection.HTTP_FORBIDDEN =>
        drain(conn)
        throw new Expired(url, status)
      case s if s >= 500 || s == 429 =>
        val body = drain(conn)
        throw new Unavailable(url, s"the fragment store answered HTTP $status to ${redacted(url)}: $body")
      case _ =>
        val body = drain(conn)
        throw new GazetteException(s"the fragment store answered HTTP $status to ${redacted(url)}: $body")
    }
  }

  /** The URL without its query, which holds the signature. */
  def redacted(url: String): String = url.takeWhile(_ != '?')

  private def rangeStart(conn: HttpURLConnection): Option[Long] =
    Option(conn.getHeaderField("Content-Range")).collect {
      case s if s.startsWith("bytes ") => Try(s.drop(6).takeWhile(_ != '-').trim.toLong).toOption
    }.flatten

  private def drain(conn: HttpURLConnection): String =
    try {
      val err = conn.getErrorStream
      if (err == null) ""
      else try new String(err.readNBytes(512), UTF_8).replaceAll("\\s+", " ").trim
      finally err.close()
    } catch { case _: java.io.IOException => "" }
    finally conn.disconnect()
}
