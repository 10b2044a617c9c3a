package io.sparkgazette.client

import java.io.{BufferedInputStream, EOFException, File, FileInputStream, InputStream}
import java.net.URI
import java.util.zip.GZIPInputStream

import com.google.protobuf.UnsafeByteOperations
import io.sparkgazette.client.protocol.{CompressionCodec, Fragment}

/** Reads a persisted fragment straight from a `file://` fragment store, as Gazette's own
  * clients do with a mapped file root, sparing the broker from streaming it.
  *
  * A store URL is relative to the brokers' `--broker.file-root`, which is why `root` is
  * needed. Fragments are compressed as a whole, so reading from the middle decompresses and
  * discards the bytes before `from`.
  */
object FragmentReader {
  private val ChunkSize = 1 << 16

  /** Whether `url` can be read by [[open]] (otherwise the broker must stream the fragment). */
  def readable(url: String): Boolean = url.startsWith("file://")

  /** Chunks of `fragment` from `from` up to `until` (exclusive; at most the fragment's end). */
  def open(root: String, url: String, fragment: Fragment, from: Long, until: Long)
      : Iterator[Chunk] with AutoCloseable = {
    require(fragment.begin <= from && from < fragment.end, s"offset $from is outside fragment $url")
    val file = new File(root, new URI(url).getPath)
    val in = decompress(fragment.compressionCodec, new BufferedInputStream(new FileInputStream(file), ChunkSize))
    skipFully(in, from - fragment.begin, url)
    new FragmentChunks(in, url, from, math.min(until, fragment.end))
  }

  private def decompress(codec: CompressionCodec, in: InputStream): InputStream = codec match {
    case CompressionCodec.NONE => in
    // JDK 17's GZIPInputStream reads the concatenated members that Gazette writes.
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

  private final class FragmentChunks(in: InputStream, url: String, start: Long, until: Long)
      extends Iterator[Chunk] with AutoCloseable {
    private var offset = start

    override def hasNext: Boolean = {
      if (offset >= until) close()
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

    override def close(): Unit = in.close()
  }
}
