package io.sparkgazette.spark
package source

import java.net.URLEncoder
import java.nio.charset.StandardCharsets.UTF_8

import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._
import scala.concurrent.{Await, Future}

import io.sparkgazette.client.GazetteClient
import io.sparkgazette.client.protocol.CompressionCodec
import io.sparkgazette.testing.{Journals, Judge, SparkClusterSuite, StoreProxy}
import org.scalatest.funsuite.AnyFunSuite

/** A journal's primary that has not yet listed its store: a broker restarted as a replica whose
  * first listing of the store is slow gets the journal's new bytes by replication, and once it is
  * primary it answers a Read of older bytes as a read before the journal's first fragment, with an
  * offset jump. ListFragments waits for that listing: the earliest offset the driver plans from is
  * where the listing agrees, and a task reading from an explicit offset gets every byte.
  */
class SourceUnlistedStoreIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  override protected def brokers: Int = 2
  override protected def store: String = "s3"

  private def rows(broker: String, journal: String, extra: (String, String)*): Seq[(Long, Long, String)] =
    spark.read.format("gazette").option("broker", broker).option("journals", journal).options(extra.toMap)
      .load().selectExpr("begin", "end", "uuid").collect().toSeq
      .map(r => (r.getLong(0), r.getLong(1), Option(r.getString(2)).getOrElse(""))).sortBy(_._1)

  private def await(what: String, timeout: FiniteDuration)(done: => Boolean): Unit = {
    val deadline = timeout.fromNow
    while (!done) {
      assert(!deadline.isOverdue(), s"timed out waiting for $what")
      Thread.sleep(100)
    }
  }

  // From the earliest offset, the driver asks where the journal begins; from an explicit one,
  // only the task's read meets the jump.
  for ((starting, journal) <- Seq("earliest" -> "unlisted/earliest", "explicit" -> "unlisted/explicit"))
    test(s"a jump over bytes the store holds, from a primary that has not listed it yet, is no data loss ($starting)") {
      readThroughUnlistedPrimary(journal, if (starting == "earliest") "earliest" else s"""{"$journal": 0}""")
    }

  private def readThroughUnlistedPrimary(journal: String, startingOffsets: String): Unit = {
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

        // The premise: the new primary answers a read of the first bytes with a jump.
        val jump = survivor.readableFrom(journal, 0)
        assert(
          jump > 0, s"the new primary reads the journal from $jump, its store listed (${proxy.heldLists.get} held)")
        val read = Future(rows(cluster.brokers(replica), journal, "directFragmentReads" -> "false",
            "startingOffsets" -> startingOffsets))
        // Long enough for the driver to plan and a task to meet the jump, on a loaded machine.
        Thread.sleep(20000)
        proxy.releaseLists()
        assert(Await.result(read, 3.minutes) == expected)
      } finally {
        survivor.close()
        // The next test's journal needs both brokers.
        if (primaryStopped) cluster.startBroker(primary)
      }
    } finally proxy.close()
  }
}
