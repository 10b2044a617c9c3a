package io.sparkgazette.spark
package source

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._
import scala.concurrent.{Await, Future}
import scala.jdk.CollectionConverters._

import io.sparkgazette.client.protocol.CompressionCodec
import io.sparkgazette.testing.{FragmentStoreSuite, Journals, Judge, StoreProxy}
import org.apache.spark.sql.functions.{col, udf}
import org.scalatest.funsuite.AnyFunSuite

/** The source over journals persisted in a cloud fragment store, as brokers sign for it in
  * production: GCS (`storage.googleapis.com`, on fake-gcs-server) and Azure Blob Storage
  * (`<account>.blob.core.windows.net`, on Azurite, which checks every signature). Tasks fetch the
  * persisted fragments through the URLs the brokers sign, from the cloud host those name, and what
  * they emit is what Gazette's reader reads, message by message, whatever the codec and however
  * the store fails. `SPARKGAZETTE_STORES=whole` (`make test-stores`) runs every codec and the long
  * cases; by default (`make test`) a short version runs.
  */
abstract class SourceCloudStoreIntegrationSuite(kind: String) extends AnyFunSuite with FragmentStoreSuite {
  override protected def store: String = kind

  protected val whole: Boolean = sys.env.get("SPARKGAZETTE_STORES").contains("whole")
  // What the connector does here is what it does on S3, whose suite make test runs whole: the
  // short version keeps what differs per store (signatures, transcoding, the store's answers).
  private val WholeOnly = "run by make test-stores (SPARKGAZETTE_STORES=whole), as on S3 in make test"

  /** The codecs the short version reads (the other cases read NONE); the whole one reads them all. */
  protected def shortCodecs: Seq[CompressionCodec]

  override protected def persistenceDeadline: FiniteDuration = 90.seconds

  /** The broker's CPU time so far, in clock ticks (user + system). */
  private def brokerTicks(): Long = {
    val stat = new String(Files.readAllBytes(Paths.get(s"/proc/${cluster.brokerPid}/stat")), UTF_8)
    val fields = stat.substring(stat.lastIndexOf(')') + 2).split(' ')
    fields(11).toLong + fields(12).toLong
  }

  test(s"every codec: persisted fragments are read from the $kind store, exactly as Gazette's reader reads them") {
    val codecs =
      if (whole) Seq(CompressionCodec.NONE, CompressionCodec.GZIP, CompressionCodec.SNAPPY, CompressionCodec.ZSTANDARD,
        CompressionCodec.GZIP_OFFLOAD_DECOMPRESSION)
      else shortCodecs
    for (codec <- codecs) {
      val journal = s"$kind/codecs/${codec.name.toLowerCase}"
      val postfix = if (codec == CompressionCodec.GZIP) """utc_date={{.Spool.FirstAppendTime.Format "2006-01-02"}}"""
      else ""
      val fragments = createPersisted(journal, cluster.storeUrl("source/"), 3, codec, postfix)
      assert(fragments.forall(f => f.compressionCodec == codec && f.backingStore == cluster.storeUrl("source/")))
      assertReadAsJudged(journal, fragments, codec)
    }
  }

  test(s"a batch split into read-committed pieces enters the $kind store's fragments in the middle") {
    for (codec <- if (whole) Seq(CompressionCodec.NONE, CompressionCodec.SNAPPY) else Seq(CompressionCodec.NONE)) {
      val journal = s"$kind/split/${codec.name.toLowerCase}"
      Journals.create(client,
        Journals.spec(journal, fragmentLength = 16384, codec = codec, store = cluster.storeUrl("split/")))
      persisted(journal, 3)
      val expected = judged(journal)
      val bytes = Judge.read(cluster.broker, journal, committed = false).last.end
      val split = Seq("bytesPerPartition" -> (bytes / 8).toString, "minPartitions" -> "4")
      val df = batch(journal, split: _*)
      assert(df.rdd.getNumPartitions >= 4)
      val (rows, metrics) = collect(df)
      assert(rows == expected, s"$codec: split pieces read from the $kind store differ from Gazette's reader")
      assert(metrics("bytesReadFromStore") > 0 && metrics("storeFallbacks") == 0, s"$codec: $metrics")
    }
  }

  test(s"a $kind store that is down has the broker serve its fragments once it is back, nothing lost or repeated") {
    assume(whole, WholeOnly)
    val journal = s"$kind/down/part-000"
    createPersisted(journal, cluster.storeUrl("down/"), 4)
    val expected = judged(journal)
    // Down long enough for the task to reach the store under a loaded machine's scheduling.
    val (rows, metrics) = readAcrossOutage(journal, down = 10.seconds)
    assert(rows == expected)
    assert(metrics("storeFallbacks") >= 1, metrics)
  }

  test(s"a $kind store down for longer than the retry budget fails the read naming the journal and the store") {
    assume(whole, WholeOnly)
    val journal = s"$kind/outage/part-000"
    val store = cluster.storeUrl("outage/")
    createPersisted(journal, store, 3)
    val messages = failedRead(journal, retryTimeout = "3s")(cluster.stopStore(), cluster.startStore())
    val named = messages.find(_.contains("GAZETTE_FRAGMENT_STORE_UNAVAILABLE"))
      .getOrElse(fail(s"no error names the store's outage: ${messages.mkString("\n")}"))
    assert(named.contains(journal) && named.contains(store) && named.contains("retryTimeout"), named)
  }

  test(s"a blocking read (real-time mode's) of the $kind store's history, the store down, fails naming the store") {
    // Real-time tasks read with block = true, which has no idle timeout: a broker waiting on a
    // store its SDK retries answers nothing, and the read must still end after retryTimeout.
    assume(whole, WholeOnly)
    val journal = s"$kind/blocking/part-000"
    val store = cluster.storeUrl("blocking/")
    createPersisted(journal, store, 3)
    val reading = new io.sparkgazette.client.GazetteClient(
      io.sparkgazette.client.ClientConfig(Seq(cluster.broker), retryTimeout = 3.seconds, rpcTimeout = 5.seconds))
    cluster.stopStore()
    try {
      val reader = reading.read(journal, 0L, 0L, block = true)
      val outcome = Future(scala.util.Try(reader.hasNext))
      val waited = 120.seconds
      val ended =
        try Await.result(outcome, waited)
        catch {
          case _: java.util.concurrent.TimeoutException =>
            reader.close()
            fail(s"a blocking read of $journal, its store down, still waited after $waited with no error " +
              s"(retryTimeout 3 s; ${reader.storeFallbacks} fallbacks, offset ${reader.offset})")
        }
      val failure = ended.failed.getOrElse(fail(s"the read went on while the store was down: $ended"))
      assert(failure.getMessage.contains(store) && failure.getMessage.contains(journal), failure.getMessage)
    } finally {
      cluster.startStore()
      reading.close()
    }
  }

  test(s"a fragment removed from the $kind store after the broker listed it is a data-loss decision") {
    assume(whole, WholeOnly)
    val journal = s"$kind/removed/part-000"
    val victim = createPersisted(journal, cluster.storeUrl("removed/"), 4).sortBy(_.begin).apply(1)
    val name = f"${victim.begin}%016x-${victim.end}%016x"
    val listing = cluster.storeKeys(s"removed/$journal/")
    cluster.deleteStoreObject(listing.find(_.contains(name)).getOrElse(fail(s"no object for $name in $listing")))

    val failure = intercept[Exception](Await.result(Future(collect(batch(journal, "retryTimeout" -> "5s"))), 2.minutes))
    assert(causeMessages(failure).exists(_.contains("Data loss")), failure)

    val (_, metrics) =
      Await.result(Future(collect(batch(journal, "retryTimeout" -> "5s", "failOnDataLoss" -> "false"))), 2.minutes)
    assert(metrics("lostBytes") == victim.end - victim.begin, metrics)
  }

  test(s"a $kind store answering 429 or 503 has a broker serve the fragment, and is read from again after a backoff") {
    assume(whole, WholeOnly)
    val journal = s"$kind/throttled/part-000"
    val fragments = createPersisted(journal, cluster.storeUrl("throttled/"), 4)
    val expected = judged(journal)
    val storeBytes = fragments.map(f => f.end - f.begin).sum
    // The store's first backoff (1 s, doubling while it keeps failing), and a margin.
    val backoff = 1500L
    val proxy = StoreProxy.inFrontOf(cluster.cloudStore.get)
    try {
      for ((status, n) <- Seq(429, 503).zipWithIndex) {
        proxy.refuseNext(1, status)
        val (rows, metrics) = collect(batch(journal))
        assert(rows == expected, s"HTTP $status")
        assert(proxy.refused.get == n + 1, s"HTTP $status was not answered")
        assert(metrics("storeFallbacks") >= 1, s"HTTP $status: $metrics")
        Thread.sleep(backoff)
        val (again, after) = collect(batch(journal))
        assert(again == expected, s"after HTTP $status")
        assert(after("storeFallbacks") == 0 && after("bytesReadFromStore") >= storeBytes / 2,
          s"the store was not read again after HTTP $status: $after")
      }
      // A store that keeps answering 503 is asked once per backoff, not once per fragment, and the
      // read ends, every fragment from a broker.
      proxy.refuseNext(Int.MaxValue, 503)
      val gets = proxy.signedGets.get
      val (rows, metrics) = Await.result(Future(collect(batch(journal))), 2.minutes)
      assert(rows == expected, "a store answering 503 throughout")
      assert(metrics("bytesReadFromStore") == 0 && metrics("storeFallbacks") >= fragments.size, metrics)
      assert(proxy.signedGets.get - gets <= 2, s"${proxy.signedGets.get - gets} GETs of ${fragments.size} fragments")
      proxy.refuseNext(0)
      Thread.sleep(2 * backoff)
      val (_, healthy) = collect(batch(journal))
      assert(healthy("bytesReadFromStore") >= storeBytes / 2, s"the store was not read again: $healthy")
    } finally proxy.close()
  }

  test(s"the broker's CPU for a read from the $kind store, against one it proxies") {
    assume(whole, WholeOnly)
    val journal = s"$kind/cpu/part-000"
    val length = if (whole) 4L << 20 else 512L << 10
    Journals.create(client,
      Journals.spec(journal, fragmentLength = length, codec = CompressionCodec.NONE, store = cluster.storeUrl("cpu/")))
    persisted(journal, 4, events = 2000)
    val expected = judged(journal)
    // The broker's CPU time over a read, less what it spends meanwhile on its own (listing the
    // stores of this suite's journals every second, keeping its etcd lease), measured idle.
    def ticksAndNanos(work: => Unit): (Long, Long) = {
      val (t0, n0) = (brokerTicks(), System.nanoTime())
      work
      (brokerTicks() - t0, System.nanoTime() - n0)
    }
    val (idleTicks, idleNanos) = ticksAndNanos(Thread.sleep(3000))
    def cost(options: (String, String)*): (Long, Double) = {
      val (ticks, nanos) = ticksAndNanos((1 to 3).foreach { _ =>
        val (rows, _) = collect(batch(journal, options: _*))
        assert(rows == expected)
      })
      (ticks, math.max(0.0, ticks - idleTicks.toDouble * nanos / idleNanos))
    }
    val (direct, directNet) = cost()
    val (proxied, proxiedNet) = cost("directFragmentReads" -> "false")
    assert(proxied > 0, "a proxied read cost the broker no CPU time")
    info(f"$kind: the broker's CPU for a read from the store is ${directNet / math.max(proxiedNet, 1.0)}%.2f of a " +
      f"proxied read's ($direct against $proxied ticks, less $idleTicks ticks per 3 s idle: $directNet%.1f against " +
      f"$proxiedNet%.1f; 3 reads of ${expected.last._3} bytes each)")
  }
}

/** GCS: its emulator transcodes as GCS does (or not), which the GZIP_OFFLOAD_DECOMPRESSION codec relies on. */
class SourceGcsStoreIntegrationSuite extends SourceCloudStoreIntegrationSuite("gcs") {
  override protected def shortCodecs: Seq[CompressionCodec] = Seq(CompressionCodec.GZIP_OFFLOAD_DECOMPRESSION)
}

/** Azure Blob Storage: Azurite checks the SAS signature of every URL the tasks fetch, and its expiry. */
class SourceAzureStoreIntegrationSuite extends SourceCloudStoreIntegrationSuite("azure") {
  override protected def shortCodecs: Seq[CompressionCodec] = Seq(CompressionCodec.ZSTANDARD)

  test("a URL that expired while its task was busy is minted again by a new Read and read from the store") {
    assume(whole, "run by make test-stores (SPARKGAZETTE_STORES=whole): it waits out a signature's minute")
    // One task reads both: the larger range first, while the other's Read, sent ahead, holds the
    // URL a broker signed for its first fragment, valid for a minute (Gazette's, fixed).
    val busy = "azure/expiry/busy"
    val late = "azure/expiry/late"
    val fragments = createPersisted(late, cluster.storeUrl("expiry/"), 3)
    val lateBytes = Judge.read(cluster.broker, late, committed = false).last.end
    Journals.create(client, Journals.spec(busy, codec = CompressionCodec.NONE, store = cluster.storeUrl("expiry/")))
    var seed = 1L
    while (Judge.read(cluster.broker, busy, committed = false).lastOption.forall(_.end < 2 * lateBytes)) {
      Judge.publishEvents(cluster.broker, busy, 200, seed)
      seed += 1
    }
    val expected = (judged(busy) ++ judged(late)).sortBy(r => (r._2, r._1))
    // The task's first message keeps it busy past the URL's expiry (SAS expiries are to the second).
    val stall = udf { (journal: String, begin: Long) =>
      if (journal == busy && begin == 0) Thread.sleep(65000)
      true
    }
    val fetched = new java.util.concurrent.ConcurrentLinkedQueue[(java.net.URI, java.time.Instant)]()
    java.net.ResponseCache.setDefault(new java.net.ResponseCache {
      override def get(uri: java.net.URI, method: String, headers: java.util.Map[String, java.util.List[String]])
          : java.net.CacheResponse = {
        fetched.add(uri -> java.time.Instant.now())
        null
      }
      override def put(uri: java.net.URI, conn: java.net.URLConnection): java.net.CacheRequest = null
    })
    val (rows, metrics) =
      try collect(batch(s"$busy,$late", "minPartitions" -> "1").where(stall(col("journal"), col("begin"))))
      finally java.net.ResponseCache.setDefault(null)
    assert(rows.sortBy(r => (r._2, r._1)) == expected)
    def expiry(uri: java.net.URI): java.time.Instant = java.time.Instant.parse(
      uri.getQuery.split('&').collectFirst { case p if p.startsWith("se=") => p.drop(3) }.get)
    val ofLate = fetched.asScala.toSeq.filter(_._1.getPath.contains(s"/$late/"))
    val expired = ofLate.filter { case (uri, at) => expiry(uri).isBefore(at) }
    assert(expired.nonEmpty, s"no URL had expired when it was fetched: ${ofLate.map(_._1.getPath)}")
    assert(metrics("storeFallbacks") == 0, metrics)
    assert(metrics("bytesReadFromStore") >= fragments.map(f => f.end - f.begin).sum, metrics)
  }

  test(
    "a store that refuses the brokers' signatures (HTTP 403) fails the read naming the store, the journal and the refusal") {
    val journal = "azure/refused/part-000"
    val store = cluster.storeUrl("refused/")
    createPersisted(journal, store, 3)
    val messages = failedRead(journal, retryTimeout = "5s")(cluster.revokeStoreKey(), cluster.restoreStoreKey())
    // The line that names them says what the store answered, ahead of whatever the broker adds.
    val named = messages.flatMap(_.linesIterator).find(l => l.contains(journal) && l.contains(store))
      .getOrElse(fail(s"no error names the journal and the store: ${messages.mkString("\n")}"))
    assert(named.contains("refused") && named.contains("HTTP 403"), named)
  }
}
