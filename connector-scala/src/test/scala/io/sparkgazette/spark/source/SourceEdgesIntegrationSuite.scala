package io.sparkgazette.spark
package source

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.time.Instant
import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import io.sparkgazette.client.protocol.{ApplyRequest, JournalSpec}
import io.sparkgazette.message.Framing
import io.sparkgazette.spark.source.state.SequencerStates
import io.sparkgazette.spark.testing.BatchPolicy.{Limit, ReadAll, Skip}
import io.sparkgazette.spark.testing.{BatchPolicy, MessageKey}
import io.sparkgazette.testing.{Journals, Judge, JudgeScript, SparkClusterSuite}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/** The source off the happy path: producers that commit rarely, batches nobody reads to the end,
  * journals deleted and re-created, journals whose last bytes are not a whole message. Each test
  * is judged by Gazette's own ReadCommittedIter over the same bytes.
  */
class SourceEdgesIntegrationSuite extends AnyFunSuite with SparkClusterSuite {

  private val t0 = Instant.parse("2026-11-22T12:00:00Z").toEpochMilli
  private def minutes(n: Int): Long = t0 + n * 60000L

  // A journal created again gets a fresh fragment store: in the old one it would find the old
  // journal's persisted fragments and continue at their end.
  private def script(journal: String, contentType: String = Framing.JsonLines, store: String = "file:///")
      : JudgeScript = {
    Files.createDirectories(java.nio.file.Paths.get(cluster.fragmentRoot, store.stripPrefix("file:///")))
    Journals.create(
      client, Journals.spec(journal, labels = Seq("content-type" -> contentType, "app" -> "edges"), store = store))
    Judge.script(cluster.broker, journal)
  }

  private def expected(journal: String): Seq[MessageKey] =
    Judge.read(cluster.broker, journal).map(r => (r.journal, r.begin, r.end, r.uuid))

  private def options(journal: String, extra: (String, String)*): Map[String, String] =
    Map("broker" -> cluster.broker, "journals" -> journal, "startingOffsets" -> "earliest") ++ extra

  /** One AvailableNow run from `checkpoint`: batches are read as `policy` says (by batch id), and
    * the rows of the batches read in full are returned. Fails if the run does not end in time.
    */
  private def run(options: Map[String, String], checkpoint: String, policy: Long => BatchPolicy = _ => ReadAll,
      timeoutSeconds: Int = 60): Seq[MessageKey] = {
    val rows = new ConcurrentHashMap[Long, Seq[MessageKey]]()
    lastProgress = Nil
    val q = start(options, checkpoint) { (df, id) =>
      policy(id) match {
        case ReadAll => rows.put(id, keys(df))
        case Skip =>
        case Limit(n) => df.limit(n).collect()
      }
    }
    try {
      if (!q.awaitTermination(timeoutSeconds * 1000L))
        fail(
          s"the query made no progress for $timeoutSeconds s: ${q.recentProgress.lastOption.map(_.json).getOrElse("")}")
    } finally q.stop()
    lastProgress = q.recentProgress.toSeq
    rows.asScala.toSeq.sortBy(_._1).flatMap(_._2)
  }

  // The progress of the last run's batches.
  private var lastProgress: Seq[org.apache.spark.sql.streaming.StreamingQueryProgress] = Nil

  private def start(options: Map[String, String], checkpoint: String)(each: (DataFrame, Long) => Any): StreamingQuery =
    spark.readStream.format("gazette").options(options).load()
      .writeStream.option("checkpointLocation", checkpoint).trigger(Trigger.AvailableNow())
      .foreachBatch { (df: DataFrame, id: Long) => each(df, id); () }
      .start()

  /** Plans and logs the next batch, then fails the query before the batch is read. */
  private def planWithoutReading(options: Map[String, String], checkpoint: String): Unit = {
    val q = start(options, checkpoint)((_, _) => throw new IllegalStateException("planned, never read"))
    intercept[Exception](q.awaitTermination(60000))
  }

  private def keys(df: DataFrame): Seq[MessageKey] =
    df.select("journal", "begin", "end", "uuid").collect().toSeq
      .map(r => (r.getString(0), r.getLong(1), r.getLong(2), Option(r.getString(3)).getOrElse("")))

  private def checkpoint(): String = Files.createTempDirectory("gazette-ckpt").toString

  private def assertSameMessages(ours: Seq[MessageKey], theirs: Seq[MessageKey]): Unit = {
    assert(ours.distinct.size == ours.size, s"a message was emitted twice: ${ours.diff(ours.distinct)}")
    assert(ours.sortBy(_._2) == theirs.sortBy(_._2))
  }

  test("a producer whose transaction spans batches is never pruned while it is open") {
    val journal = "edges/prune/part-000"
    val ckpt = checkpoint()
    val opts = options(journal, "producerPruneHorizon" -> "1m")
    val w = script(journal)
    try {
      w.clock(t0).commit(0).clock(minutes(2)).commit(1).continue(0).sync()
      var rows = run(opts, ckpt)
      w.clock(minutes(3)).commit(1).sync()
      rows ++= run(opts, ckpt)
      w.ack(0).sync()
      rows ++= run(opts, ckpt)
      assertSameMessages(rows, expected(journal))
      assert(rows.size == 4)
    } finally w.close()
  }

  Seq[(String, BatchPolicy)]("never read" -> Skip, "read only through limit(1)" -> Limit(1)).foreach {
    case (how, policy) =>
      test(s"a batch $how leaves the next batch a correct state") {
        val journal = s"edges/unread-${if (policy == Skip) "skip" else "limit"}/part-000"
        val ckpt = checkpoint()
        val w = script(journal)
        try {
          w.commit(1).sync()
          var rows = run(options(journal), ckpt)
          w.continue(0).commit(1).continue(0).sync()
          run(options(journal), ckpt, policy = _ => policy)
          val m = expected(journal).last // q0, then m: the transaction of c1 and c2 is still open
          w.ack(0).dup(1, 1).sync()
          rows ++= run(options(journal), ckpt)
          // The ACK commits c1 and c2 in the next batch; m belongs to the batch not read, its re-send is a duplicate.
          assertSameMessages(rows, expected(journal).filterNot(_ == m))
          assert(rows.size == 3)
        } finally w.close()
      }
  }

  test("a journal deleted and re-created is not read with the old journal's offsets and states") {
    val journal = "edges/recreated/part-000"
    val ckpt = checkpoint()
    var w = script(journal)
    w.continue(0).commit(1).ack(0).sync(); w.close()
    val first = run(options(journal), ckpt)
    assertSameMessages(first, expected(journal))
    delete(journal)
    w = script(journal, store = "file:///again/")
    // More bytes than before, so the old offset lies inside the new journal.
    (0 until 6).foreach(_ => w.commit(2))
    w.continue(3).sync(); w.close()
    val e = intercept[Exception](run(options(journal), ckpt))
    assert(e.getMessage.contains(s"journal $journal") && e.getMessage.contains("failOnDataLoss"), e.getMessage)
    w = Judge.script(cluster.broker, journal)
    w.ack(3).sync(); w.close()
    val second = run(options(journal, "failOnDataLoss" -> "false"), ckpt)
    assertSameMessages(second, expected(journal))
  }

  test(
    "a journal that leaves the selector and comes back starts again with fresh state; states of journals gone are removed") {
    val journal = "edges/wandering/part-000"
    val staying = "edges/wandering/part-001"
    val ckpt = checkpoint()
    val opts = Map("broker" -> cluster.broker, "selector" -> "app=wandering", "startingOffsets" -> "earliest",
      "failOnDataLoss" -> "false")
    def label(app: String): Unit =
      Journals.create(client, Journals.spec(journal, labels = Seq("content-type" -> Framing.JsonLines, "app" -> app)))
    def states(j: String) = SequencerStates.of(ckpt).exists(_.journal == j)
    label("wandering")
    Journals.create(
      client, Journals.spec(staying, labels = Seq("content-type" -> Framing.JsonLines, "app" -> "wandering")))
    val w = Judge.script(cluster.broker, journal)
    val other = Judge.script(cluster.broker, staying)
    try {
      w.continue(0).commit(1).ack(0).continue(0).sync()
      other.commit(0).sync()
      var rows = run(opts, ckpt)
      assert(rows.count(_._1 == journal) == 2 && states(journal))
      label("elsewhere")
      for (_ <- 0 until 3) { other.commit(0).sync(); rows ++= run(opts, ckpt) }
      assert(!states(journal), "the states of a journal no longer read were kept")
      label("wandering")
      w.ack(0).commit(1).sync()
      val again = run(opts, ckpt)
      assertSameMessages(again.filter(_._1 == journal), expected(journal))
      assertSameMessages((rows ++ again).filter(_._1 == staying), expected(staying))
    } finally { w.close(); other.close() }
  }

  test("a journal that vanished between planning and re-planning follows failOnDataLoss") {
    val journal = "edges/vanished-planned/part-000"
    val other = "edges/vanished-planned/part-001"
    val ckpt = checkpoint()
    val opts =
      Map("broker" -> cluster.broker, "selector" -> "prefix=edges/vanished-planned/", "startingOffsets" -> "earliest",
        "failOnDataLoss" -> "false")
    Journals.create(client, Journals.spec(journal), Journals.spec(other))
    Seq(journal, other).foreach(Judge.publishScenario(cluster.broker, _, "committed"))
    val first = run(opts, ckpt)
    val readTo = client.writeHead(journal)
    Seq(journal, other).foreach(Judge.publishScenario(cluster.broker, _, "committed"))
    val planned = client.writeHead(journal) - readTo
    planWithoutReading(opts, ckpt)
    val read = first.filter(_._1 == journal)
    delete(journal)
    val rows = first ++ run(opts, ckpt)
    assertSameMessages(rows.filter(_._1 == other), expected(other))
    assert(rows.filter(_._1 == journal) == read)
    val skipped = lastProgress.map(_.sources.head.metrics.get("bytesSkippedAtPlanning").toLong).max
    assert(skipped == planned, s"bytesSkippedAtPlanning $skipped, the journal's planned bytes $planned")
  }

  test(
    "a journal named in 'journals' that is deleted follows failOnDataLoss, also when a planned batch is re-planned") {
    val journal = "edges/named/part-000"
    val other = "edges/named/part-001"
    val ckpt = checkpoint()
    val opts = Map("broker" -> cluster.broker, "journals" -> s"$journal,$other", "startingOffsets" -> "earliest")
    Journals.create(client, Journals.spec(journal), Journals.spec(other))
    Seq(journal, other).foreach(Judge.publishScenario(cluster.broker, _, "committed"))
    val first = run(opts, ckpt)
    Judge.publishScenario(cluster.broker, other, "committed")
    planWithoutReading(opts, ckpt)
    delete(journal)
    // The re-planned batch runs, then the next trigger finds the journal gone.
    var rows = first
    val failing = start(opts, ckpt)((df, _) => rows ++= keys(df))
    val e = intercept[Exception](failing.awaitTermination(60000))
    assert(e.getMessage.contains(s"Data loss in journal $journal"), e.getMessage)
    rows ++= run(opts + ("failOnDataLoss" -> "false"), ckpt)
    assertSameMessages(rows.filter(_._1 == other), expected(other))
    assert(rows.count(_._1 == journal) == 30)
  }

  test("a restart before the first batch is committed keeps the starting offsets it began with") {
    val journal = "edges/initial/part-000"
    val ckpt = checkpoint()
    val opts = Map("broker" -> cluster.broker, "journals" -> journal, "startingOffsets" -> "latest")
    val w = script(journal)
    try {
      w.commit(0).sync()
      val skip = client.writeHead(journal)
      val q = spark.readStream.format("gazette").options(opts).load().writeStream.option("checkpointLocation", ckpt)
        .foreachBatch { (_: DataFrame, _: Long) => throw new IllegalStateException("planned, never read") }.start()
      try {
        while (q.isActive && q.recentProgress.isEmpty) Thread.sleep(50)
        w.commit(0).commit(0).sync()
        intercept[Exception](q.awaitTermination(60000))
      } finally q.stop()
      val rows = run(opts, ckpt)
      assertSameMessages(rows, expected(journal).filter(_._2 >= skip))
      assert(rows.size == 2)
    } finally w.close()
  }

  test("a CSV journal ending in a blank line, and a protobuf one ending in a newline, do not stall") {
    for ((journal, ct) <- Seq("edges/blank/csv" -> Framing.Csv, "edges/blank/fixed" -> Framing.ProtobufFixed)) {
      val ckpt = checkpoint()
      val w = script(journal, ct)
      try {
        w.commit(0).commit(0).raw("\n".getBytes(UTF_8)).sync()
        val rows = run(options(journal), ckpt, timeoutSeconds = 30)
        assertSameMessages(rows, expected(journal))
        // CSV skips blank lines; in protobuf-fixed a newline is tolerated only as the last byte.
        if (ct == Framing.Csv) w.commit(0).sync()
        val more = run(options(journal), ckpt, timeoutSeconds = 30)
        assertSameMessages(rows ++ more, expected(journal))
        assert(more.size == (if (ct == Framing.Csv) 1 else 0))
      } finally w.close()
    }
  }

  test("a truncated last message waits for the rest of it") {
    val journal = "edges/truncated/part-000"
    val ckpt = checkpoint()
    val w = script(journal)
    try {
      w.commit(0).raw("""{"half":""".getBytes(UTF_8)).sync()
      val rows = run(options(journal), ckpt, timeoutSeconds = 30)
      assert(rows.size == 1)
      w.raw("1}\n".getBytes(UTF_8)).commit(0).sync()
      val more = run(options(journal), ckpt, timeoutSeconds = 30)
      assertSameMessages(rows ++ more, expected(journal))
      assert(more.size == 2)
    } finally w.close()
  }

  test("a replay whose bytes retention removed is a data-loss decision, taken at once") {
    val journal = "edges/retention/part-000"
    // Small fragments, so that the open transaction's first messages lie in fragments of their own.
    Journals.create(client, Journals.spec(journal, fragmentLength = 1024))
    val w = Judge.script(cluster.broker, journal)
    try {
      (0 until 24).foreach(_ => w.continue(0).sync()) // one append each, so that fragments roll between them
      w.commit(1).sync()
      val ckpt = checkpoint()
      val first = run(options(journal), ckpt)
      assert(first.size == 1)
      // Retention removes the fragments holding the transaction's first messages.
      val cut = Judge.read(cluster.broker, journal, committed = false)(12).begin
      val deadline = System.currentTimeMillis() + 60000
      def persisted = client.listFragments(journal).map(_.getSpec).filter(f => f.modTime != 0 && f.end <= cut)
      while (persisted.isEmpty && System.currentTimeMillis() < deadline) Thread.sleep(200)
      persisted.foreach { f =>
        val dir = java.nio.file.Paths.get(cluster.fragmentRoot, journal)
        Files.list(dir).iterator().asScala.filter(
          _.getFileName.toString.startsWith(f"${f.begin}%016x-${f.end}%016x")).foreach(Files.delete(_))
      }
      while (client.readableFrom(journal, 0) == 0 && System.currentTimeMillis() < deadline) Thread.sleep(200)
      val gapEnd = client.readableFrom(journal, 0)
      assert(
        gapEnd > 0,
        s"the fragments were not removed: cut $cut, fragments " +
          client.listFragments(journal).map(_.getSpec).map(f => (f.begin, f.end, f.modTime, f.backingStore)) +
          " files " +
          Files.list(java.nio.file.Paths.get(cluster.fragmentRoot, journal)).iterator().asScala.toList
      )
      w.ack(0).sync()
      val e = intercept[Exception](run(options(journal), ckpt, timeoutSeconds = 30))
      assert(e.getMessage.contains(s"Data loss in journal $journal") && e.getMessage.contains("replayed"), e.getMessage)
      val second = run(options(journal, "failOnDataLoss" -> "false"), ckpt, timeoutSeconds = 30)
      // What is left of the transaction is emitted at its ACK, as Gazette's reader emits it now.
      assertSameMessages(second, expected(journal).filterNot(first.contains))
      assert(second.nonEmpty && second.forall(_._2 >= gapEnd))
    } finally w.close()
  }

  test("a batch whose endingOffsets lie past a write head fails at planning, naming journal and head") {
    val journal = "edges/ending/part-000"
    val w = script(journal)
    w.commit(0).sync(); w.close()
    val head = client.writeHead(journal)
    val e =
      intercept[Exception](spark.read.format("gazette").option("broker", cluster.broker).option("journals", journal)
          .option("endingOffsets", s"""{"$journal": ${head + 100}}""").load().collect())
    assert(e.getMessage.contains(journal) && e.getMessage.contains(s"write head $head"), e.getMessage)
  }

  test("a suspended journal is skipped and counted, and read again once an append resumes it") {
    val journal = "edges/suspended/part-000"
    val other = "edges/suspended/part-001"
    val ckpt = checkpoint()
    val opts = Map("broker" -> cluster.broker, "selector" -> "prefix=edges/suspended/", "startingOffsets" -> "earliest")
    Journals.create(client, Journals.spec(journal), Journals.spec(other))
    val w = Judge.script(cluster.broker, journal)
    val o = Judge.script(cluster.broker, other)
    try {
      w.commit(0).sync(); o.commit(0).sync()
      var rows = run(opts, ckpt)
      // What `gazctl journals suspend` and brokers' auto-suspension record once every fragment is
      // persisted. (Recorded by hand here, the journal's unpersisted bytes are gone: judged before.)
      val before = expected(journal)
      val head = client.writeHead(journal)
      val spec = client.list(s"name=$journal").head.getSpec
      client.upsert(spec.withSuspend(JournalSpec.Suspend(JournalSpec.Suspend.Level.FULL, head)))
      o.commit(0).sync()
      val q = start(opts, ckpt) { (df, _) => rows ++= keys(df) }
      try assert(q.awaitTermination(60000))
      finally q.stop()
      assert(q.recentProgress.last.sources.head.metrics.get("suspendedJournals") == "1")
      w.commit(0).sync() // an append resumes the journal
      rows ++= run(opts, ckpt)
      val mine = rows.filter(_._1 == journal)
      assertSameMessages(mine.take(before.size), before)
      assert(mine.drop(before.size).map(_._2) == Seq(head), "the message appended after resuming, read once")
      assertSameMessages(rows.filter(_._1 == other), expected(other))
    } finally { w.close(); o.close() }
  }

  test("a journal suspended when a query starts at the latest offsets joins there once resumed") {
    val journal = "edges/suspended-at-start/part-000"
    Journals.create(client, Journals.spec(journal))
    val w = Judge.script(cluster.broker, journal)
    try {
      w.commit(0).commit(0).sync()
      val head = client.writeHead(journal)
      val spec = client.list(s"name=$journal").head.getSpec
      client.upsert(spec.withSuspend(JournalSpec.Suspend(JournalSpec.Suspend.Level.FULL, head)))
      val ckpt = checkpoint()
      val opts = Map("broker" -> cluster.broker, "journals" -> journal, "startingOffsets" -> "latest")
      assert(run(opts, ckpt).isEmpty)
      w.commit(0).sync()
      assert(run(opts, ckpt).map(_._2) == Seq(head))
    } finally w.close()
  }

  test("the states are written with the session's Hadoop configuration, as Spark's own checkpoint is") {
    val journal = "edges/session-conf/part-000"
    val w = script(journal)
    w.commit(0).continue(1).sync()
    spark.conf.set("fs.gztest.impl", classOf[io.sparkgazette.testing.SessionOnlyFileSystem].getName)
    spark.conf.set("fs.gztest.impl.disable.cache", "true") // else Hadoop's cache hides which configuration is used
    try {
      val ckpt = "gztest://" + checkpoint()
      var rows = run(options(journal), ckpt)
      w.ack(1).sync(); w.close()
      rows ++= run(options(journal), ckpt)
      assertSameMessages(rows, expected(journal))
      assert(Files.exists(java.nio.file.Paths.get(ckpt.stripPrefix("gztest://"), "sources", "0", "sequencer",
            "source.json")))
    } finally { spark.conf.unset("fs.gztest.impl"); spark.conf.unset("fs.gztest.impl.disable.cache") }
  }

  test("a checkpoint the executors cannot see fails the first batch, naming it, instead of starting over") {
    val journal = "edges/driver-only/part-000"
    val w = script(journal)
    w.commit(0).sync(); w.close()
    spark.conf.set("fs.gzdriver.impl", classOf[io.sparkgazette.testing.DriverOnlyFileSystem].getName)
    spark.conf.set("fs.gzdriver.impl.disable.cache", "true")
    try {
      val ckpt = "gzdriver://" + checkpoint()
      val e = intercept[Exception](run(options(journal), ckpt))
      assert(
        e.getMessage.contains("cannot be seen from executor host") && e.getMessage.contains("sequencer"), e.getMessage)
    } finally { spark.conf.unset("fs.gzdriver.impl"); spark.conf.unset("fs.gzdriver.impl.disable.cache") }
  }

  test("AvailableNow reads a backlog smaller than minBytesPerTrigger") {
    val journal = "edges/min-bytes/part-000"
    val w = script(journal)
    w.commit(0).commit(0).sync(); w.close()
    val rows = run(options(journal, "minBytesPerTrigger" -> "1000000", "maxTriggerDelay" -> "1h"), checkpoint())
    assertSameMessages(rows, expected(journal))
  }

  test("minBytesPerTrigger: a trickle below the minimum is read once maxTriggerDelay has passed since the last " +
    "batch, however many triggers found too little meanwhile") {
    val journal = "edges/min-bytes-delay/part-000"
    val w = script(journal)
    w.commit(0).commit(0).sync(); w.close()
    val rows = new ConcurrentHashMap[Long, Seq[MessageKey]]()
    @volatile var firstRead = 0L
    // Before the stream exists: the delay counts from the stream's creation, so never less than this.
    val started = System.nanoTime()
    val q = spark.readStream.format("gazette")
      .options(options(journal, "minBytesPerTrigger" -> "1000000", "maxTriggerDelay" -> "3s")).load()
      .writeStream.option("checkpointLocation", checkpoint()).trigger(Trigger.ProcessingTime("200 milliseconds"))
      .foreachBatch { (df: DataFrame, id: Long) =>
        val read = keys(df)
        if (read.nonEmpty && firstRead == 0L) firstRead = System.nanoTime()
        rows.put(id, read)
        ()
      }
      .start()
    try {
      val deadline = System.nanoTime() + 60L * 1000000000L
      while (firstRead == 0L && q.isActive && System.nanoTime() < deadline) Thread.sleep(50)
      assert(firstRead != 0L, s"nothing read within 60 s: ${q.recentProgress.lastOption.map(_.json).getOrElse("")}")
      assert(firstRead - started >= 3L * 1000000000L,
        s"read after ${(firstRead - started) / 1000000} ms, before maxTriggerDelay (3 s) passed")
    } finally q.stop()
    assertSameMessages(rows.asScala.toSeq.sortBy(_._1).flatMap(_._2), expected(journal))
  }

  private def delete(journal: String): Unit =
    client.apply(Seq(ApplyRequest.Change(expectModRevision = -1, delete = journal)))
}
