package io.sparkgazette.testing

import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._
import scala.concurrent.{Await, Future}

import io.sparkgazette.client.protocol.{CompressionCodec, Fragment}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.scalatest.Suite

/** A [[SparkClusterSuite]] over journals whose fragments are persisted in the cluster's store:
  * publishing until the store holds them, reading them as a batch with the scan's metrics, judging
  * them with Gazette's reader, and reading them while the store fails.
  */
trait FragmentStoreSuite extends SparkClusterSuite { this: Suite =>

  /** How long [[persisted]] publishes before it fails the test. */
  protected def persistenceDeadline: FiniteDuration = 60.seconds

  /** A message as the source and Gazette's reader give it: journal, begin, end, UUID (or ""), payload. */
  protected type Row5 = (String, Long, Long, String, String)

  protected def batch(journal: String, extra: (String, String)*): DataFrame =
    spark.read.format("gazette").option("broker", cluster.broker).option("journals", journal).options(extra.toMap)
      .load().selectExpr("journal", "begin", "end", "uuid", "cast(value as string)")

  // Collects `df` itself, so that its plan holds the scan's metrics.
  protected def collect(df: DataFrame): (Seq[Row5], Map[String, Long]) = {
    val rows = df.collect().toSeq.map(r =>
      (r.getString(0), r.getLong(1), r.getLong(2), Option(r.getString(3)).getOrElse(""), r.getString(4)))
    val metrics = df.queryExecution.executedPlan.collectFirst { case s: BatchScanExec => s.metrics }.get
    (rows.sortBy(_._2), metrics.map { case (k, m) => k -> m.value }.toMap)
  }

  protected def judged(journal: String): Seq[Row5] =
    Judge.read(cluster.broker, journal).map(r => (r.journal, r.begin, r.end, r.uuid, r.payload)).sortBy(_._2)

  /** Random transactions (duplicates and rollbacks among them; or `events` purchase events at a
    * time) by Gazette's Publisher, until the journal has rolled at least `fragments` fragments into
    * the store and the broker serves them from there.
    */
  protected def persisted(journal: String, fragments: Int, events: Int = 0): Seq[Fragment] = {
    var seed = (journal.hashCode & 0xffff).toLong
    val deadline = persistenceDeadline.fromNow
    def stored = client.listFragments(journal).flatMap(_.spec).filter(f => f.backingStore.nonEmpty && f.modTime > 0)
    while (stored.size < fragments) {
      if (deadline.isOverdue())
        fail(s"$journal: fragments were not persisted within $persistenceDeadline: ${client.listFragments(journal)}")
      if (client.listFragments(journal).flatMap(_.spec).size <= fragments) {
        if (events > 0) Judge.publishEvents(cluster.broker, journal, events, seed)
        else Judge.publishRandom(cluster.broker, journal, seed)
        seed += 1
      } else Thread.sleep(200)
    }
    stored
  }

  /** Creates `journal` with fragments of 4 KiB in `codec` (under `postfix`, a path postfix template)
    * in the store at `storeUrl`, and [[persisted]] `fragments` of them.
    */
  protected def createPersisted(journal: String, storeUrl: String, fragments: Int,
      codec: CompressionCodec = CompressionCodec.NONE, postfix: String = ""): Seq[Fragment] = {
    Journals.create(client,
      Journals.spec(journal, fragmentLength = 4096, codec = codec, store = storeUrl, pathPostfixTemplate = postfix))
    persisted(journal, fragments)
  }

  /** Reads `journal`, its persisted `fragments` in `codec`, straight from the store and through the
    * broker: both as Gazette's reader reads it, the first from the store with no broker's help, the
    * second from the broker alone.
    */
  protected def assertReadAsJudged(journal: String, fragments: Seq[Fragment], codec: CompressionCodec): Unit = {
    val expected = judged(journal)
    assert(expected.nonEmpty)

    val (direct, metrics) = collect(batch(journal))
    assert(direct == expected, s"$codec: the source read from the $store store differs from Gazette's reader")
    val storeBytes = fragments.map(f => f.end - f.begin).sum
    assert(metrics("bytesReadFromStore") >= storeBytes / 2, s"$codec: $metrics; persisted $storeBytes bytes")
    assert(metrics("storeFallbacks") == 0, s"$codec: $metrics")

    val (proxied, brokerMetrics) = collect(batch(journal, "directFragmentReads" -> "false"))
    assert(proxied == expected, s"$codec: through the broker")
    assert(brokerMetrics("bytesReadFromStore") == 0 && brokerMetrics("bytesReadFromBrokers") > 0, brokerMetrics)
  }

  /** The messages of `failure` and of its causes, outermost first. */
  protected def causeMessages(failure: Throwable): List[String] =
    Iterator.iterate(failure)(_.getCause).takeWhile(_ != null).map(_.getMessage).filter(_ != null).toList

  /** A batch read of `journal` started with its store down, the store started again `down` later:
    * the read must still be running then (the task fails to fetch the fragment and the broker fails
    * to proxy it, so the task retries the broker until the store is back). Its rows and metrics.
    */
  protected def readAcrossOutage(journal: String, down: FiniteDuration): (Seq[Row5], Map[String, Long]) = {
    cluster.stopStore()
    val read =
      try {
        val running = Future(collect(batch(journal)))
        Thread.sleep(down.toMillis)
        assert(!running.isCompleted, "the read ended while the store was down")
        running
      } finally cluster.startStore()
    Await.result(read, 3.minutes)
  }

  /** The [[causeMessages]] of the failure of a batch read of `journal` with `retryTimeout`, its store
    * made to fail by `break` before the read and mended by `mend` after it.
    */
  protected def failedRead(journal: String, retryTimeout: String)(break: => Unit, mend: => Unit): List[String] = {
    break
    val failure =
      try intercept[Exception](Await.result(Future(collect(batch(journal, "retryTimeout" -> retryTimeout))), 2.minutes))
      finally mend
    causeMessages(failure)
  }
}
