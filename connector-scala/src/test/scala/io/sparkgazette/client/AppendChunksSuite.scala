package io.sparkgazette.client

import com.google.protobuf.ByteString
import org.scalatest.funsuite.AnyFunSuite

class AppendChunksSuite extends AnyFunSuite {
  private def bytes(n: Int) = ByteString.copyFrom(Array.tabulate[Byte](n)(i => (i % 251).toByte))

  test("content is split into chunks no larger than the limit, covering it exactly") {
    for (n <- Seq(0, 1, 1023, 1024, 1025, 10 * 1024 + 7)) {
      val content = bytes(n)
      val chunks = Append.chunks(content, 1024).toSeq
      assert(chunks.forall(c => c.size() > 0 && c.size() <= 1024))
      assert(chunks.size == (n + 1023) / 1024)
      assert(chunks.foldLeft(ByteString.EMPTY)(_ concat _) == content)
    }
  }

  test("chunk sizes above the broker's message limit are refused") {
    val e = intercept[IllegalArgumentException](ClientConfig(Seq("http://127.0.0.1:8080"), appendChunkSize = 4 << 20))
    assert(e.getMessage.contains("appendChunkSize"))
  }

  test("broker endpoints must be http(s) URLs and are named when they are not") {
    val e = intercept[IllegalArgumentException](ClientConfig("127.0.0.1:8080"))
    assert(e.getMessage.contains("'127.0.0.1:8080'"))
  }
}
