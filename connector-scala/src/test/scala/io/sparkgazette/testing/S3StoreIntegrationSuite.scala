package io.sparkgazette.testing

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Try

import io.sparkgazette.client.protocol.CompressionCodec
import org.scalatest.funsuite.AnyFunSuite

/** The harness's own test, kept beside it as tests/harness keeps Python's: its S3 store (MinIO)
  * from Scala. A journal spec naming it, with the fragment settings the suites choose, has its
  * fragments persisted there; the server stops and starts on its port and objects.
  * (tests/harness/test_store.py reads the fragments back through signed URLs and Gazette's reader.)
  */
class S3StoreIntegrationSuite extends AnyFunSuite with ClusterSuite {
  override protected def store: String = "s3"

  test("a journal on the S3 store persists its fragments there, under its path postfix") {
    val journal = "itest/s3store/zstd"
    val store = cluster.storeUrl("scala/")
    val endpoint = cluster.s3Endpoint.get
    assert(
      store == s"s3://gazette/scala/?endpoint=${endpoint.replace(":", "%3A").replace("/", "%2F")}&region=us-east-1")
    Journals.create(
      client,
      Journals.spec(
        journal,
        fragmentLength = 1024,
        codec = CompressionCodec.ZSTANDARD,
        store = store,
        pathPostfixTemplate = """utc_date={{.Spool.FirstAppendTime.Format "2006-01-02"}}""",
        flushIntervalSeconds = 3600
      )
    )

    // Each append is over the fragment length, so the next one (the last: an empty one) rolls it.
    val appends = (0 until 3).map(a =>
      (0 until 12).map(i => s"""{"n":${a * 12 + i},"pad":"${"x" * 80}"}""" + "\n").mkString)
    appends.foreach(a => client.append(journal, a.getBytes(UTF_8)))
    client.append(journal, Array.emptyByteArray)
    def persisted = client.listFragments(journal).flatMap(_.spec).filter(_.backingStore.nonEmpty)
    val deadline = System.currentTimeMillis() + 30000
    while (persisted.size < appends.size && System.currentTimeMillis() < deadline) Thread.sleep(100)

    assert(persisted.map(f => f.end - f.begin) == appends.map(_.length), persisted)
    assert(persisted.forall(f => f.backingStore == store && f.modTime > 0 && f.pathPostfix.startsWith("utc_date=20")))
    val stored = cluster.s3Keys(s"scala/$journal/")
    // Keys: the store's prefix, the journal, the postfix, then begin-end-sha1.zst.
    assert(stored.size == persisted.size)
    stored.zip(persisted).foreach { case (key, f) =>
      assert(
        key.startsWith(f"scala/$journal/${f.pathPostfix}/${f.begin}%016x-${f.end}%016x-") && key.endsWith(".zst"), key)
    }

    cluster.stopStore()
    assert(Try(cluster.s3Keys()).isFailure, "the S3 server still answers")
    cluster.startStore()
    assert(cluster.s3Keys(s"scala/$journal/") == stored)
  }
}
