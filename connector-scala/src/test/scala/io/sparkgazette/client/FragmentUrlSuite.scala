package io.sparkgazette.client

import java.io.ByteArrayOutputStream
import java.net.InetSocketAddress
import java.nio.charset.StandardCharsets.UTF_8
import java.util.zip.GZIPOutputStream

import scala.collection.mutable

import com.sun.net.httpserver.{HttpExchange, HttpServer}
import io.sparkgazette.client.protocol.{CompressionCodec, Fragment}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** How a fragment is fetched through a signed URL: the HTTP conversation with a store, each
  * store behaviour played by a loopback server (the S3 protocol end to end is the store suites').
  */
class FragmentUrlSuite extends AnyFunSuite with BeforeAndAfterAll {
  private val content = (0 until 2000).map(i => s"""{"i":$i}""" + "\n").mkString.getBytes(UTF_8)
  private val begin = 1000L
  private def fragment(codec: CompressionCodec) = Fragment(
    journal = "a/journal", begin = begin, end = begin + content.length, compressionCodec = codec)

  private def gzip(b: Array[Byte]): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val z = new GZIPOutputStream(out)
    z.write(b)
    z.close()
    out.toByteArray
  }

  // What the next request to each path gets: (status, headers, body, whether Range is honoured).
  private final case class Answer(status: Int, headers: Map[String, String], body: Array[Byte], ranges: Boolean)
  private val answers = mutable.Map[String, Answer]()
  private val requests = mutable.Buffer[(String, Map[String, String])]()
  private val server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0)
  server.createContext(
    "/",
    (x: HttpExchange) => {
      val path = x.getRequestURI.getPath
      val headers = Seq("Range", "Accept-Encoding").flatMap(h => Option(x.getRequestHeaders.getFirst(h)).map(h -> _))
      answers.synchronized(requests += path -> headers.toMap)
      val a = answers.synchronized(answers(path))
      val range =
        headers.toMap.get("Range").filter(_ => a.ranges).map(_.stripPrefix("bytes=").takeWhile(_ != '-').toInt)
      a.headers.foreach { case (k, v) => x.getResponseHeaders.add(k, v) }
      val body = range.fold(a.body)(a.body.drop)
      range.foreach(r => x.getResponseHeaders.add("Content-Range", s"bytes $r-${a.body.length - 1}/${a.body.length}"))
      x.sendResponseHeaders(if (range.isDefined) 206 else a.status, if (body.isEmpty) -1 else body.length)
      x.getResponseBody.write(body)
      x.close()
    }
  )
  server.start()
  override def afterAll(): Unit = server.stop(0)

  private def url(path: String) = s"http://127.0.0.1:${server.getAddress.getPort}$path?X-Amz-Signature=secret"

  private def read(path: String, codec: CompressionCodec, from: Long): Array[Byte] = {
    val chunks = FragmentReader.open(FragmentReader.FromUrl, url(path), fragment(codec), from, Long.MaxValue, 5000)
    try chunks.map(_.content.toByteArray).foldLeft(Array.emptyByteArray)(_ ++ _)
    finally chunks.close()
  }

  private def lastRequest(path: String) = answers.synchronized(requests.filter(_._1 == path).last._2)

  test("an uncompressed fragment is fetched from the offset where the store serves ranges, else read past it") {
    for (ranges <- Seq(true, false)) {
      val path = s"/none-$ranges"
      answers.synchronized(answers(path) = Answer(200, Map.empty, content, ranges))
      val got = read(path, CompressionCodec.NONE, begin + 777)
      assert(new String(got, UTF_8) == new String(content.drop(777), UTF_8), s"ranges=$ranges")
      assert(lastRequest(path).get("Range").contains("bytes=777-"))
    }
  }

  test("GZIP is asked for as stored; GZIP_OFFLOAD_DECOMPRESSION is decompressed by the store or by the reader") {
    answers.synchronized {
      answers("/gzip") = Answer(200, Map.empty, gzip(content), ranges = false)
      // S3 and its kin keep the encoding they were given; GCS transcodes.
      answers("/offload-as-stored") = Answer(200, Map("Content-Encoding" -> "gzip"), gzip(content), ranges = false)
      answers("/offload-transcoded") = Answer(200, Map.empty, content, ranges = false)
    }
    assert(read("/gzip", CompressionCodec.GZIP, begin + 5).sameElements(content.drop(5)))
    assert(lastRequest("/gzip").get("Accept-Encoding").contains("gzip") && !lastRequest("/gzip").contains("Range"))
    for (p <- Seq("/offload-as-stored", "/offload-transcoded")) {
      assert(read(p, CompressionCodec.GZIP_OFFLOAD_DECOMPRESSION, begin + 5).sameElements(content.drop(5)), p)
      assert(lastRequest(p).get("Accept-Encoding").contains("identity"), p)
    }
  }

  test("a refused URL is Expired (a fresh one is minted); other failures name the status, not the signature") {
    answers.synchronized {
      answers("/expired") = Answer(403, Map.empty, "<Error>Request has expired</Error>".getBytes(UTF_8), false)
      answers("/broken") = Answer(503, Map.empty, "<Error>SlowDown</Error>".getBytes(UTF_8), false)
    }
    val expired = intercept[FragmentUrl.Expired](read("/expired", CompressionCodec.NONE, begin))
    assert(expired.status == 403 && !expired.getMessage.contains("secret"))
    val broken = intercept[GazetteException](read("/broken", CompressionCodec.NONE, begin))
    assert(broken.getMessage.contains("HTTP 503") && broken.getMessage.contains("SlowDown"), broken.getMessage)
    assert(!broken.getMessage.contains("secret"), broken.getMessage)
  }

  test("a body shorter than the fragment fails naming where it ended") {
    answers.synchronized(answers("/short") = Answer(200, Map.empty, content.take(1500), ranges = false))
    val e = intercept[GazetteException](read("/short", CompressionCodec.NONE, begin))
    assert(e.getMessage.contains(s"ended at journal offset ${begin + 1500}"), e.getMessage)
  }

  // What a reader delivered before it failed (if it did): each chunk must hold the fragment's
  // bytes at its offset, whatever the store did.
  private def delivered(path: String, f: Fragment, bytes: Array[Byte], from: Long): (Seq[Chunk], Option[Throwable]) = {
    val got = mutable.Buffer[Chunk]()
    val failure =
      try {
        val chunks = FragmentReader.open(FragmentReader.FromUrl, url(path), f, from, f.end, 5000)
        try { chunks.foreach(got += _); None }
        finally chunks.close()
      } catch { case e: GazetteException => Some(e) }
    got.foreach { c =>
      val want = bytes.slice((c.offset - f.begin).toInt, (c.end - f.begin).toInt)
      assert(c.content.toByteArray.sameElements(want), s"$path: the chunk at ${c.offset} holds other bytes ($failure)")
    }
    (got.toSeq, failure)
  }

  test("a GZIP fragment of several members is read whole when the store pauses between members") {
    // Gazette's spool writes a GZIP fragment as one member per commit. Over a network the next
    // member's header often has not arrived when the reader finishes the one before; JDK 17's
    // GZIPInputStream then takes the end of the buffered bytes for the end of the stream.
    val half = content.length / 2
    val members = Seq(gzip(content.take(half)), gzip(content.drop(half)))
    server.createContext(
      "/paced/",
      (x: HttpExchange) => {
        x.sendResponseHeaders(200, members.map(_.length).sum.toLong)
        val out = x.getResponseBody
        members.foreach { m => out.write(m); out.flush(); Thread.sleep(300) }
        x.close()
      }
    )
    val (chunks, failure) = delivered("/paced/gzip", fragment(CompressionCodec.GZIP), content, begin)
    assert(failure.isEmpty, s"the fragment was cut short: ${failure.map(_.getMessage)}")
    assert(chunks.map(_.content.size).sum == content.length)
  }

  test("a 206 whose Content-Range starts elsewhere than the asked offset delivers no wrong bytes") {
    // Larger than a chunk, so that a reader delivers chunks before it could notice a short body.
    val big = (0 until 30000).map(i => f"$i%09d\n").mkString.getBytes(UTF_8)
    val f =
      Fragment(journal = "a/journal", begin = begin, end = begin + big.length, compressionCodec = CompressionCodec.NONE)
    for ((path, start, header) <- Seq(("/range-elsewhere", 500, true), ("/range-unlabelled", 100000, false))) {
      server.createContext(
        path,
        (x: HttpExchange) => {
          val body = big.drop(start)
          if (header) x.getResponseHeaders.add("Content-Range", s"bytes $start-${big.length - 1}/${big.length}")
          x.sendResponseHeaders(206, body.length.toLong)
          x.getResponseBody.write(body)
          x.close()
        }
      )
      val (_, failure) = delivered(path, f, big, begin + 100000)
      assert(failure.nonEmpty, s"$path: a range that is not the one asked for was read")
    }
  }

  test("a body longer than its fragment is not taken for the fragment") {
    // Gazette's FragmentReader requires EOF exactly at the fragment's end (ErrDidNotReadExpectedEOF),
    // as docs/protocol.md says this reader does.
    answers.synchronized(answers("/long") = Answer(200, Map.empty, content ++ "{\"i\":-1}\n".getBytes(UTF_8), false))
    val (_, failure) = delivered("/long", fragment(CompressionCodec.NONE), content, begin)
    assert(failure.nonEmpty, "a body with bytes past the fragment's end was read as the fragment")
  }

  test("an object longer than its fragment, whose bytes are not the fragment's, delivers none of them") {
    // A 200 whose body is some other object (a hop's error page, an object of another name): the
    // reader finds bytes past the fragment's end, which says the object is not the fragment, but
    // only once it has delivered the fragment's length of them.
    val other = (0 until 2500).map(i => s"<p>not the fragment $i</p>").mkString.getBytes(UTF_8)
    assert(other.length > content.length)
    answers.synchronized(answers("/other-object") = Answer(200, Map.empty, other, ranges = false))
    val (chunks, failure) = delivered("/other-object", fragment(CompressionCodec.NONE), content, begin)
    assert(failure.nonEmpty, "another object was read as the fragment")
    assert(chunks.isEmpty, s"${chunks.size} chunks of another object were delivered")
  }

  test(
    "a GZIP fragment answered gzip-encoded (as its request's Accept-Encoding: gzip allows) delivers no wrong bytes") {
    // The reader asks for gzip, so a store or a hop in between may encode the answer with gzip:
    // the body is then the fragment's gzip bytes gzipped again, and Content-Encoding says so.
    val r = new scala.util.Random(49)
    val big = (0 until 20000).map(_ => f"${r.nextLong()}%016x\n").mkString.getBytes(UTF_8)
    val stored = gzip(big)
    assert(stored.length > FragmentReader.ChunkSize, "the stored fragment must exceed a chunk")
    answers.synchronized(
      answers("/gzip-encoded") = Answer(200, Map("Content-Encoding" -> "gzip"), gzip(stored), ranges = false))
    val f =
      Fragment(journal = "a/journal", begin = begin, end = begin + big.length, compressionCodec = CompressionCodec.GZIP)
    val (chunks, failure) = delivered("/gzip-encoded", f, big, begin)
    assert(failure.isEmpty || chunks.isEmpty, s"${chunks.size} chunks delivered before: $failure")
  }
}
