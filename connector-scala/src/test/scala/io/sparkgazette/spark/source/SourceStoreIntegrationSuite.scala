package io.sparkgazette.spark
package source

import java.net.URLEncoder
import java.nio.charset.StandardCharsets.UTF_8

import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._
import scala.concurrent.{Await, Future}

import io.sparkgazette.client.protocol.CompressionCodec
import io.sparkgazette.testing.{FragmentStoreSuite, Journals, StoreProxy}
import org.scalatest.funsuite.AnyFunSuite

/** The source over journals whose fragments are persisted in an S3 store (the harness's MinIO,
  * which checks every signature): tasks fetch the persisted fragments through the signed URLs the
  * brokers hand out, as signed, and what they emit is what Gazette's reader reads, message by
  * message and byte by byte, whatever the codec and however the store fails.
  */
class SourceStoreIntegrationSuite extends AnyFunSuite with FragmentStoreSuite {
  override protected def store: String = "s3"

  test("every codec: persisted fragments are read from the S3 store, exactly as Gazette's reader reads them") {
    for (codec <- Seq(CompressionCodec.NONE, CompressionCodec.GZIP, CompressionCodec.SNAPPY,
        CompressionCodec.ZSTANDARD, CompressionCodec.GZIP_OFFLOAD_DECOMPRESSION)) {
      val journal = s"store/codecs/${codec.name.toLowerCase}"
      // One journal's fragments under a path postfix: the signed URL carries it, not the name.
      val postfix = if (codec == CompressionCodec.GZIP) """utc_date={{.Spool.FirstAppendTime.Format "2006-01-02"}}"""
      else ""
      val fragments = createPersisted(journal, cluster.storeUrl("source/"), 3, codec, postfix)
      assert(fragments.forall(_.compressionCodec == codec))
      if (postfix.nonEmpty) assert(fragments.forall(_.pathPostfix.startsWith("utc_date=")), fragments)
      assertReadAsJudged(journal, fragments, codec)
    }
  }

  test("a store that is down has the broker serve its fragments once it is back, and nothing is lost or repeated") {
    val journal = "store/down/part-000"
    createPersisted(journal, cluster.storeUrl(), 4)
    val expected = judged(journal)
    val (rows, metrics) = readAcrossOutage(journal, down = 3.seconds)
    assert(rows == expected)
    assert(metrics("storeFallbacks") >= 1, metrics)
  }

  test("a store down for longer than the retry budget fails the read naming the journal and the store") {
    val journal = "store/outage/part-000"
    val store = cluster.storeUrl("outage/")
    createPersisted(journal, store, 3)
    val messages = failedRead(journal, retryTimeout = "3s")(cluster.stopStore(), cluster.startStore())
    val named = messages.find(_.contains("GAZETTE_FRAGMENT_STORE_UNAVAILABLE"))
      .getOrElse(fail(s"no error names the store's outage: ${messages.mkString("\n")}"))
    assert(named.contains(journal) && named.contains(store.takeWhile(_ != '?')) && named.contains("retryTimeout"),
      named)
  }

  /** A journal whose store is the S3 server behind a [[StoreProxy]], with `fragments` persisted. */
  private def proxied(journal: String, fragments: Int, length: Long = 4096,
      codec: CompressionCodec = CompressionCodec.SNAPPY)(check: StoreProxy => Unit): Unit = {
    val proxy = new StoreProxy(cluster.s3Endpoint.get)
    try {
      val enc = (s: String) => URLEncoder.encode(s, UTF_8)
      val store = cluster.storeUrl("proxied/").replace(enc(cluster.s3Endpoint.get), enc(proxy.endpoint))
      assert(store.contains(enc(proxy.endpoint)), store)
      Journals.create(client, Journals.spec(journal, fragmentLength = length, codec = codec, store = store))
      persisted(journal, fragments, events = if (length > 16384) 2000 else 0)
      check(proxy)
    } finally proxy.close()
  }

  test("a signed URL the store refuses is minted again by a new Read; refused again, a broker serves the fragment") {
    proxied("store/refused/part-000", 3) { proxy =>
      val expected = judged("store/refused/part-000")
      proxy.refuseNext(1)
      val gets = proxy.signedGets.get
      val (once, metrics) = collect(batch("store/refused/part-000"))
      assert(once == expected)
      assert(metrics("storeFallbacks") == 0 && metrics("bytesReadFromStore") > 0, metrics)
      val fetched = proxy.signedGets.get - gets
      assert(fetched >= 4, s"$fetched GETs: the refused one was not asked again")

      proxy.refuseNext(2, status = 400)
      val (twice, again) = collect(batch("store/refused/part-000"))
      assert(twice == expected)
      assert(again("storeFallbacks") == 1 && again("bytesReadFromStore") > 0, again)
    }
  }

  test("a fragment cut short or answered with an error is served by a broker from where the task got to") {
    // Fragments longer than a task's read of 64 KiB, so that the cut one was partly delivered.
    proxied("store/cut/part-000", 3, length = 160 << 10, codec = CompressionCodec.NONE) { proxy =>
      val expected = judged("store/cut/part-000")
      proxy.cutNext(1, bytes = 100 << 10)
      val (cut, metrics) = collect(batch("store/cut/part-000"))
      assert(cut == expected)
      assert(metrics("storeFallbacks") == 1 && metrics("bytesReadFromStore") > 0, metrics)

      proxy.refuseNext(100, status = 503)
      val (refused, all) = collect(batch("store/cut/part-000"))
      assert(refused == expected)
      assert(all("storeFallbacks") >= 3 && all("bytesReadFromStore") == 0, all)
    }
  }

  test("a 200 whose body runs past its fragment's end has none of its bytes taken for the journal's") {
    // Another object than the fragment, as framed as the fragment (each '1' a '2') and longer: the
    // reader finds bytes past the fragment's end, which says the object is not the fragment.
    proxied("store/other-object/part-000", 3, codec = CompressionCodec.NONE) { proxy =>
      val expected = judged("store/other-object/part-000")
      proxy.alterNext(1)(body => body.map(b => if (b == '1') '2'.toByte else b) ++ Array.fill(64)('\n'.toByte))
      val (rows, metrics) = collect(batch("store/other-object/part-000"))
      assert(proxy.alterations.get == 0, "no GET was answered with another object")
      assert(rows == expected, s"rows differ from Gazette's reader's ($metrics)")
    }
  }

  test("a fragment whose object has stray bytes past its end costs the store only that fragment") {
    proxied("store/stray-bytes/part-000", 4, codec = CompressionCodec.NONE) { proxy =>
      val expected = judged("store/stray-bytes/part-000")
      val stored = client.listFragments("store/stray-bytes/part-000").flatMap(_.spec)
        .filter(f => f.backingStore.nonEmpty && f.modTime > 0).map(f => f.end - f.begin)
      proxy.alterNext(1)(_ ++ Array.fill(64)('\n'.toByte))
      val (rows, metrics) = collect(batch("store/stray-bytes/part-000"))
      assert(rows == expected)
      assert(metrics("storeFallbacks") == 1, metrics)
      assert(
        metrics("bytesReadFromStore") >= stored.sum - stored.max,
        s"the fragments after the one with stray bytes went to a broker: $metrics of ${stored.sum} stored bytes"
      )
    }
  }

  /** `journal`'s 6 fragments read while its store is silenced by `silence`: one GET finds the
    * store silent, the fragments after it go to a broker, with at most one more GET to see
    * whether the store is back.
    */
  private def readThroughSilence(journal: String)(silence: StoreProxy => Unit): Unit =
    proxied(journal, 6, codec = CompressionCodec.NONE) { proxy =>
      val expected = judged(journal)
      val fragments = client.listFragments(journal).flatMap(_.spec).count(_.backingStore.nonEmpty)
      silence(proxy)
      val (rows, metrics) = collect(batch(journal, "rpcTimeout" -> "2s"))
      assert(rows == expected)
      assert(proxy.heldGets.get <= 2, s"${proxy.heldGets.get} GETs waited on a silent store of $fragments fragments")
      assert(metrics("storeFallbacks") >= fragments - 2 && metrics("bytesReadFromStore") == 0, metrics)
    }

  test("a store that stops answering is waited on once, not for each fragment: a broker serves them meanwhile") {
    readThroughSilence("store/blackhole/part-000")(_.blackHole())
  }

  test("a store that answers and then stalls is waited on once, not for each fragment") {
    readThroughSilence("store/stall/part-000")(_.stallBodies())
  }

  test("a fragment removed from the store after the broker listed it is a data-loss decision") {
    val journal = "store/removed/part-000"
    val victim = createPersisted(journal, cluster.storeUrl("removed/"), 4).sortBy(_.begin).apply(1)
    val name = f"${victim.begin}%016x-${victim.end}%016x"
    val listing = cluster.s3Keys("removed/")
    cluster.deleteS3Object(listing.find(_.contains(name)).getOrElse(fail(s"no object for $name in $listing")))

    val lost = Future(collect(batch(journal, "retryTimeout" -> "5s")))
    val failure = intercept[Exception](Await.result(lost, 2.minutes))
    assert(causeMessages(failure).exists(_.contains("Data loss")), failure)

    val skipped = Future(collect(batch(journal, "retryTimeout" -> "5s", "failOnDataLoss" -> "false")))
    val (_, metrics) = Await.result(skipped, 2.minutes)
    assert(metrics("lostBytes") == victim.end - victim.begin, metrics)
  }
}
