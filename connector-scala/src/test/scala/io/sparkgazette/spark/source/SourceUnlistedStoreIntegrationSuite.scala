package io.sparkgazette.spark
package source

import java.net.URLEncoder
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.concurrent.ConcurrentLinkedQueue

import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._
import scala.concurrent.{Await, Future}
import scala.jdk.CollectionConverters._

import io.sparkgazette.client.protocol.{CompressionCodec, Status}
import io.sparkgazette.client.{GazetteClient, ReadProbe}
import io.sparkgazette.testing.{Journals, Judge, SparkClusterSuite, StoreProxy}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

/** A journal's primary that has not yet listed its store: a broker restarted as a replica whose
  * first listing of the store is slow gets the journal's new bytes by replication, and once it is
  * primary it answers a Read of older bytes as if the journal began later. ListFragments waits for
  * that listing: the earliest offset the driver plans from is where the listing agrees, and tasks
  * read every byte.
  */
class SourceUnlistedStoreIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  override protected def brokers: Int = 2
  override protected def store: String = "s3"

  private def await(what: String, timeout: FiniteDuration)(done: => Boolean): Unit = {
    val deadline = timeout.fromNow
    while (!done) {
      assert(!deadline.isOverdue(), s"timed out waiting for $what")
      Thread.sleep(100)
    }
  }

  private type Row = (Long, Long, String)

  private def rowsOf(df: DataFrame): Seq[Row] =
    df.selectExpr("begin", "end", "uuid").collect().toSeq
      .map(r => (r.getLong(0), r.getLong(1), Option(r.getString(2)).getOrElse("")))

  private def rows(broker: String, journal: String, extra: (String, String)*): Seq[Row] =
    rowsOf(spark.read.format("gazette").option("broker", broker).option("journals", journal)
        .option("directFragmentReads", "false").options(extra.toMap).load()).sortBy(_._1)

  /** Runs a stream from its checkpoint until it has nothing left, returning its rows. */
  private def streamed(broker: String, journal: String, checkpoint: String): Seq[Row] = {
    val got = new ConcurrentLinkedQueue[Row]()
    val q = spark.readStream.format("gazette").option("broker", broker).option("journals", journal)
      .option("directFragmentReads", "false").option("startingOffsets", "earliest").load()
      .writeStream.option("checkpointLocation", checkpoint).trigger(Trigger.AvailableNow())
      .foreachBatch { (df: DataFrame, _: Long) => rowsOf(df).foreach(got.add); () }
      .start()
    assert(q.awaitTermination(180000), s"the stream over $journal did not end within 3 minutes")
    got.asScala.toSeq.sortBy(_._1)
  }

  // From the earliest offset, the driver asks where the journal begins; a stream that resumes
  // from its checkpoint asks nothing, and only its tasks' reads meet the new primary. Planning waits
  // on the listing within the retry budget; past it, the error says what it waited for.
  test("a batch from the earliest offset, through a primary that has not listed its store, reads every byte, " +
    "and past the retry budget fails naming the journal, the store and the offset") {
    val journal = "unlisted/earliest"
    throughUnlistedPrimary(
      journal,
      failing = Some((
          rows(_, journal, "startingOffsets" -> "earliest", "rpcTimeout" -> "2s", "retryTimeout" -> "6s"),
          (e: Throwable, store: String) => {
            val messages =
              Iterator.iterate(e)(_.getCause).takeWhile(_ != null).map(_.getMessage).filter(_ != null).toList
            val named = messages.find(_.contains("GAZETTE_FRAGMENT_STORE_UNAVAILABLE"))
              .getOrElse(fail(s"no error names the store: ${messages.mkString("\n")}"))
            assert(named.contains(s"journal $journal") && named.contains("offset 0") &&
                named.contains(store.takeWhile(_ != '?')) && named.contains("retryTimeout"), named)
          }))
    )(() => 0L, rows(_, journal, "startingOffsets" -> "earliest"))
  }

  test("a stream resumed through a primary that has not listed its store reads every byte, and no data loss") {
    val journal = "unlisted/resumed"
    val checkpoint = Files.createTempDirectory("gazette-ckpt").toString
    var before = Seq.empty[Row]
    throughUnlistedPrimary(journal)(
      () => {
        before = streamed(cluster.broker, journal, checkpoint)
        // Bytes past the first run, in fragments only the old primary holds once the replica
        // restarts: the resumed run's first read must jump over them.
        Judge.publishRandom(cluster.broker, journal, 1000)
        before.last._2
      },
      broker => before ++ streamed(broker, journal, checkpoint)
    )
  }

  /** Creates `journal` on two brokers, `prepare`s it (returning where the failed-over read
    * starts), restarts its replica unable to list the store, stops the primary, and `read`s
    * through the replica, now primary, before it lists the store; `failing` first, a read that
    * must fail before the listing comes and the check of its error (given the journal's store).
    */
  private def throughUnlistedPrimary(journal: String,
      failing: Option[(String => Seq[Row], (Throwable, String) => Unit)] = None)(
      prepare: () => Long, read: String => Seq[Row]): Unit = {
    val proxy = new StoreProxy(cluster.s3Endpoint.get)
    try {
      val enc = (s: String) => URLEncoder.encode(s, UTF_8)
      val store = cluster.storeUrl(s"$journal/").replace(enc(cluster.s3Endpoint.get), enc(proxy.endpoint))
      Journals.create(client,
        Journals.spec(journal, replication = 2, fragmentLength = 4096, codec = CompressionCodec.NONE, store = store))
      def fragments = client.listFragments(journal).flatMap(_.spec)
      var seed = 7L
      await("fragments persisted", 1.minute) {
        if (fragments.size <= 3) { Judge.publishRandom(cluster.broker, journal, seed); seed += 1 }
        fragments.count(_.modTime > 0) >= 3
      }
      val from = prepare()

      def routeOf(c: GazetteClient) = c.list(s"name=$journal").head.getRoute
      val primary = routeOf(client).members(routeOf(client).primary).suffix.stripPrefix("broker-").toInt
      val replica = routeOf(client).members.map(_.suffix.stripPrefix("broker-").toInt).find(_ != primary).get
      val survivor = GazetteClient(cluster.brokers(replica))
      def route = routeOf(survivor)
      var primaryStopped = false
      try {
        // The replica comes back unable to list the store, and takes the journal's next bytes by
        // replication, in a fragment of its own that begins where the primary's spool rolled.
        proxy.holdLists()
        cluster.stopBroker(replica)
        cluster.startBroker(replica)
        await("the replica back in the route", 1.minute)(route.members.size == 2)
        Judge.publishRandom(cluster.brokers(primary), journal, seed)
        // Everything before the replica's fragment is in the store before the primary goes.
        // (The primary lists the store no more than the replica: the store's keys tell.)
        def stored = cluster.s3Keys(s"$journal/").map(_.split('/').last.split('-').take(2).mkString("-")).toSet
        await("the primary's fragments persisted", 1.minute)(
          fragments.sortBy(_.begin).init.forall(f => stored(f"${f.begin}%016x-${f.end}%016x")))
        val expected = Judge.read(cluster.brokers(primary), journal).map(r => (r.begin, r.end, r.uuid)).sortBy(_._1)
        cluster.stopBroker(primary)
        primaryStopped = true
        await("the replica as primary", 1.minute)(
          route.members.lift(route.primary).exists(_.suffix == s"broker-$replica"))

        // The premise: the new primary cannot serve the bytes where this read starts yet.
        val (status, head) = ReadProbe.metadata(cluster.brokers(replica), journal, from)
        assert(
          status == Status.OFFSET_NOT_YET_AVAILABLE && head > from,
          s"the new primary answers a read at $from with $status at $head (${proxy.heldLists.get} listings held)"
        )
        failing.foreach { case (readFailing, check) =>
          check(intercept[Exception](readFailing(cluster.brokers(replica))),
            store)
        }
        val reading = Future(read(cluster.brokers(replica)))
        // Long enough for the driver to plan, and the tasks to start, before the listing comes.
        Thread.sleep(10000)
        proxy.releaseLists()
        assert(Await.result(reading, 3.minutes) == expected)
      } finally {
        survivor.close()
        // The next test's journal needs both brokers.
        if (primaryStopped) cluster.startBroker(primary)
      }
    } finally proxy.close()
  }
}
