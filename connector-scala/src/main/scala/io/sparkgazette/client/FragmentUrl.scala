package io.sparkgazette.client

import java.io.InputStream
import java.net.{HttpURLConnection, URI}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.zip.GZIPInputStream

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
        val encoding =
          Option(conn.getContentEncoding).map(_.trim.toLowerCase).filterNot(e => e.isEmpty || e == "identity")
        val length = fragment.end - fragment.begin
        def notTheFragment(what: String): Nothing = {
          drain(conn)
          throw new GazetteException(s"the fragment store answered ${redacted(url)} with $what, which is not " +
            s"fragment [${fragment.begin}, ${fragment.end}) of ${fragment.journal} ($length bytes)")
        }
        val at =
          if (status != HttpURLConnection.HTTP_PARTIAL) {
            // Only bytes stored as they are have a length to hold against the fragment's; a body
            // of another length is another object, and none of it may be taken for the journal's.
            val declared = conn.getContentLengthLong
            if (codec == CompressionCodec.NONE && encoding.isEmpty && declared >= 0 && declared != length)
              notTheFragment(s"a body that ended at journal offset ${fragment.begin + declared} ($declared bytes)")
            fragment.begin
          } else {
            val range = Option(conn.getHeaderField("Content-Range"))
            val answered = range.flatMap(contentRange)
            if (encoding.nonEmpty) notTheFragment(s"an encoded (${encoding.get}) range")
            else if (!answered.exists { case (start, end, total) =>
                start == skip && end == length - 1 && total.forall(_ == length)
              })
              notTheFragment(s"a range other than bytes=$skip- of it: ${range.getOrElse("no Content-Range")}")
            from
          }
        // The encoding the store (or a hop) gave its answer comes off first: what is left is the
        // fragment's bytes as stored, and GZIP_OFFLOAD_DECOMPRESSION ones are then plain.
        val body =
          try encoding match {
              case None => conn.getInputStream
              case Some("gzip" | "x-gzip") =>
                new GZIPInputStream(new FragmentReader.Peeking(conn.getInputStream), FragmentReader.ChunkSize)
              case Some(other) => notTheFragment(s"Content-Encoding $other, which the reader does not decode")
            }
          catch {
            case e: GazetteException => throw e
            case e: java.io.IOException =>
              conn.disconnect()
              throw new GazetteException(s"the fragment store's answer to ${redacted(url)} does not decode: $e", e)
          }
        val served = if (codec == CompressionCodec.GZIP_OFFLOAD_DECOMPRESSION) CompressionCodec.NONE else codec
        // Closing the body returns the connection to the JDK's keep-alive cache.
        (body, at, served)
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

  /** A Content-Range's first and last byte and total length (None when the total is `*`). */
  private def contentRange(header: String): Option[(Long, Long, Option[Long])] =
    header.trim match {
      case ContentRange(start, end, total) =>
        Try((start.toLong, end.toLong, Option(total).filter(_ != "*").map(_.toLong))).toOption
      case _ => None
    }

  private val ContentRange = """bytes\s+(\d+)-(\d+)/(\d+|\*)""".r

  private def drain(conn: HttpURLConnection): String =
    try {
      val err = conn.getErrorStream
      if (err == null) ""
      else try new String(err.readNBytes(512), UTF_8).replaceAll("\\s+", " ").trim
      finally err.close()
    } catch { case _: java.io.IOException => "" }
    finally conn.disconnect()
}
