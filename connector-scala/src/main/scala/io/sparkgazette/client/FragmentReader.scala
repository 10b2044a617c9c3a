package io.sparkgazette.client

import java.io.{BufferedInputStream, EOFException, File, FileInputStream, InputStream}
import java.net.URI
import java.util.zip.GZIPInputStream

import com.google.protobuf.UnsafeByteOperations
import io.sparkgazette.client.protocol.{CompressionCodec, Fragment}

/** Reads a persisted fragment straight from its fragment store, as Gazette's own readers do,
  * sparing the broker from streaming it: `file://` stores from a mapped file root, other stores
  * through the signed `http(s)://` URL the broker handed out ([[FragmentUrl]]).
  *
  * A `file://` URL is relative to the brokers' `--broker.file-root`, which is why `root` is
  * needed. Fragments are compressed as a whole, so reading from the middle decompresses and
  * discards the bytes before `from` (a fragment stored uncompressed is fetched from `from`).
  */
private[client] object FragmentReader {
  private[client] val ChunkSize = 1 << 16

  /** Where a fragment's bytes can be read from without a broker, if anywhere. */
  sealed trait Access
  final case class FromFile(root: String) extends Access
  case object FromUrl extends Access

  /** How `url` can be read, given the file root the caller has (None: the broker must stream it). */
  def access(url: String, fileRoot: Option[String], urls: Boolean): Option[Access] =
    if (url.startsWith("file://")) fileRoot.map(FromFile)
    else if (urls && (url.startsWith("https://") || url.startsWith("http://"))) Some(FromUrl)
    else None

  /** Chunks of `fragment` from `from` up to `until` (exclusive; at most the fragment's end).
    * Fails with [[FragmentUrl.Expired]] when the store refuses a URL that is no longer valid.
    */
  def open(access: Access, url: String, fragment: Fragment, from: Long, until: Long, timeoutMs: Int)
      : Iterator[Chunk] with AutoCloseable = {
    val name = FragmentUrl.redacted(url)
    require(fragment.begin <= from && from < fragment.end, s"offset $from is outside fragment $name")
    val (raw, at, codec) = access match {
      case FromFile(root) =>
        (new FileInputStream(new File(root, new URI(url).getPath)), fragment.begin, fragment.compressionCodec)
      case FromUrl =>
        FragmentUrl.get(url, fragment, from, timeoutMs)
    }
    val in =
      try {
        val decoded = decompress(codec, new Peeking(raw))
        skipFully(decoded, from - at, name)
        decoded
      } catch { case e: Throwable => raw.close(); throw e }
    new FragmentChunks(in, name, from, math.min(until, fragment.end), fragment.end)
  }

  /** A buffered stream whose `available()` is 0 only at its end. GZIPInputStream reads the next
    * member of a fragment only if the stream has bytes available when the one before ends: over
    * a network the next member's bytes may not have arrived yet, and a fragment would look cut
    * short at a member's end.
    */
  private[client] final class Peeking(in: InputStream) extends BufferedInputStream(in, ChunkSize) {
    override def available(): Int = {
      val n = super.available()
      if (n > 0) n
      else {
        mark(1)
        if (read() < 0) 0 else { reset(); 1 }
      }
    }
  }

  private def decompress(codec: CompressionCodec, in: InputStream): InputStream = codec match {
    case CompressionCodec.NONE => in
    // JDK 17's GZIPInputStream reads the concatenated members that Gazette writes. A store that
    // decompresses GZIP_OFFLOAD_DECOMPRESSION fragments itself is handled by FragmentUrl.
    case CompressionCodec.GZIP | CompressionCodec.GZIP_OFFLOAD_DECOMPRESSION => new GZIPInputStream(in, ChunkSize)
    case CompressionCodec.SNAPPY => new org.xerial.snappy.SnappyFramedInputStream(in)
    case CompressionCodec.ZSTANDARD => new com.github.luben.zstd.ZstdInputStream(in)
    case other => throw new GazetteException(s"fragment codec $other cannot be decompressed")
  }

  private def skipFully(in: InputStream, n: Long, url: String): Unit = {
    var left = n
    while (left > 0) {
      val skipped = in.skip(left)
      if (skipped <= 0) {
        if (in.read() < 0) throw new EOFException(s"fragment $url ended ${left} bytes before the requested offset")
        left -= 1
      } else left -= skipped
    }
  }

  private final class FragmentChunks(in: InputStream, url: String, start: Long, until: Long, fragmentEnd: Long)
      extends Iterator[Chunk] with AutoCloseable {
    private var offset = start

    override def hasNext: Boolean = {
      if (offset >= until) {
        // As Gazette's reader, a fragment read to its end must end there: bytes past it mean the
        // object is not the fragment its name says.
        val more = offset == fragmentEnd && !closed && in.read() >= 0
        close()
        if (more) throw new GazetteException(s"fragment $url holds bytes past its end $fragmentEnd")
      }
      offset < until
    }

    override def next(): Chunk = {
      if (!hasNext) throw new NoSuchElementException
      val buf = new Array[Byte](math.min(ChunkSize.toLong, until - offset).toInt)
      val n = in.readNBytes(buf, 0, buf.length)
      if (n < buf.length) {
        close()
        throw new GazetteException(s"fragment $url ended at journal offset ${offset + n}, before its end $until")
      }
      val chunk = Chunk(offset, UnsafeByteOperations.unsafeWrap(buf))
      offset += n
      chunk
    }

    private var closed = false

    override def close(): Unit = if (!closed) {
      closed = true
      in.close()
    }
  }
}
