package io.sparkgazette.spark
package source

import java.nio.file.Files
import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import io.sparkgazette.message.Framing
import io.sparkgazette.spark.source.state.SequencerStateStore
import io.sparkgazette.spark.source.state.SequencerStates
import io.sparkgazette.spark.testing.BatchPolicy.{Limit, ReadAll, Skip}
import io.sparkgazette.spark.testing.{BatchPolicy, MessageKey}
import io.sparkgazette.testing.{Journals, Judge, JudgeScript, SparkClusterSuite}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/** Many journals in few tasks: ranges of several journals packed into one task still emit every
  * committed message once, as Gazette's ReadCommittedIter reads them, whatever the packing, also
  * across restarts that pack differently; and the checkpoint files written per batch do not grow
  * with the number of journals.
  */
class SourceManyJournalsIntegrationSuite extends AnyFunSuite with SparkClusterSuite {

  private def journals(app: String, n: Int): Seq[String] = {
    val names = (0 until n).map(i => f"many/$app/j$i%03d")
    Journals.create(
      client, names.map(j => Journals.spec(j, labels = Seq("content-type" -> Framing.JsonLines, "app" -> app))): _*)
    names
  }

  private def options(app: String, extra: (String, String)*): Map[String, String] =
    Map("broker" -> cluster.broker, "selector" -> s"app=$app", "startingOffsets" -> "earliest") ++ extra

  private def start(options: Map[String, String], checkpoint: String)(each: (DataFrame, Long) => Any): StreamingQuery =
    spark.readStream.format("gazette").options(options).load()
      .writeStream.option("checkpointLocation", checkpoint).trigger(Trigger.AvailableNow())
      .foreachBatch { (df: DataFrame, id: Long) => each(df, id); () }
      .start()

  /** One AvailableNow run; returns the rows of the batches read in full, and the tasks of each batch. */
  private def run(options: Map[String, String], checkpoint: String, policy: Long => BatchPolicy = _ => ReadAll)
      : (Seq[MessageKey], Seq[Long]) = {
    val rows = new ConcurrentHashMap[Long, Seq[MessageKey]]()
    val q = start(options, checkpoint) { (df, id) =>
      policy(id) match {
        case ReadAll => rows.put(id, keys(df))
        case Skip =>
        case Limit(n) => df.limit(n).collect()
      }
    }
    try assert(q.awaitTermination(120000), "the query did not finish")
    finally q.stop()
    (rows.asScala.toSeq.sortBy(_._1).flatMap(_._2),
      q.recentProgress.toSeq.filter(_.numInputRows > 0)
        .map(_.sources.head.metrics.get("tasks").toLong))
  }

  private def keys(df: DataFrame): Seq[MessageKey] =
    df.select("journal", "begin", "end", "uuid").collect().toSeq
      .map(r => (r.getString(0), r.getLong(1), r.getLong(2), Option(r.getString(3)).getOrElse("")))

  private def expected(names: Seq[String]): Seq[MessageKey] =
    names.flatMap(j => Judge.read(cluster.broker, j).map(r => (r.journal, r.begin, r.end, r.uuid)))

  private def assertSameMessages(ours: Seq[MessageKey], theirs: Seq[MessageKey]): Unit = {
    assert(ours.distinct.size == ours.size, s"a message was emitted twice: ${ours.diff(ours.distinct)}")
    assert(ours.sorted == theirs.sorted)
  }

  private def checkpoint(): String = Files.createTempDirectory("gazette-many").toString

  private def withScripts[T](names: Seq[String])(f: Seq[JudgeScript] => T): T = {
    val scripts = names.map(Judge.script(cluster.broker, _))
    try f(scripts)
    finally scripts.foreach(_.close())
  }

  test(
    "journals packed into one task: transactions open across batches in several of them are emitted once, at their ACKs") {
    val names = journals("packed", 6)
    val ckpt = checkpoint()
    val opts = options("packed", "minPartitions" -> "1")
    withScripts(names) { w =>
      // Producer 0 of every other journal opens a transaction that stays open for two batches.
      w.zipWithIndex.foreach { case (s, i) => s.commit(1); if (i % 2 == 0) s.continue(0).continue(0); s.sync() }
      val (first, tasks1) = run(opts, ckpt)
      w.zipWithIndex.foreach { case (s, i) => s.commit(1); if (i % 2 == 0) s.continue(0); s.sync() }
      val (second, tasks2) = run(opts, ckpt)
      w.zipWithIndex.foreach { case (s, i) => if (i % 2 == 0) s.ack(0); s.commit(1).sync() }
      val (third, tasks3) = run(opts, ckpt)
      assert((tasks1 ++ tasks2 ++ tasks3).forall(_ == 1), s"one task per batch: $tasks1 $tasks2 $tasks3")
      assertSameMessages(first ++ second ++ third, expected(names))
      assert(third.count(_._1 == names.head) == 4, "the transaction's three messages and the commit, at the ACK")
    }
  }

  test(
    "a restart that packs a re-planned batch differently, after batches not read to their end, emits every committed message once") {
    val names = journals("repacked", 8)
    val ckpt = checkpoint()
    withScripts(names) { w =>
      w.foreach(_.commit(1).continue(0).sync())
      var rows = run(options("repacked", "minPartitions" -> "1"), ckpt)._1
      w.foreach(_.continue(0).commit(1).sync())
      // Read through limit(1), then not at all: no task of the first batch saves its states.
      run(options("repacked", "minPartitions" -> "1"), ckpt, policy = _ => Limit(1))
      val unread = expected(names).toSet -- rows
      w.foreach(_.commit(1).sync())
      val planned = start(options("repacked", "minPartitions" -> "3", "bytesPerPartition" -> "100"), ckpt) { (_, _) =>
        throw new IllegalStateException("planned, never read")
      }
      intercept[Exception](planned.awaitTermination(60000))
      w.foreach(_.ack(0).commit(1).sync())
      // Re-planned with other packing: a task per journal, then two.
      val (again, tasks) = run(options("repacked", "minPartitions" -> "2", "bytesPerPartition" -> "1000000"), ckpt)
      rows ++= again
      assert(tasks.forall(_ == 2), tasks.toString)
      // The batch read through limit(1) holds the second commit of each journal: it is not read again.
      val skipped = unread.filter(k => !again.contains(k))
      val secondCommits = names.map(j => expected(names).filter(_._1 == j)(1)).toSet
      assert(skipped == secondCommits, s"skipped $skipped, expected each journal's second commit $secondCommits")
      assertSameMessages(rows, expected(names).filterNot(skipped))
    }
  }

  test("a task reading many ranges ahead (8 MiB of them) finishes: Reads sent early do not starve the one being read") {
    val names = journals("ahead", 80)
    val block = com.google.protobuf.ByteString.copyFromUtf8(("""{"pad":"""" + "x" * 1000 + "\"}\n") * 200) // 200 KiB
    names.foreach(j => client.append(j, block))
    val df = spark.read.format("gazette").options(options("ahead", "readCommitted" -> "false",
        "bytesPerPartition" -> (1L << 30).toString, "minPartitions" -> "1")).load()
    assert(df.rdd.getNumPartitions == 1)
    val counted = java.util.concurrent.Executors.newSingleThreadExecutor()
    try {
      val n = counted.submit(() => df.count())
      assert(n.get(180, java.util.concurrent.TimeUnit.SECONDS) == 80L * 200)
    } finally counted.shutdownNow()
  }

  test("the state files written per batch are bounded by its tasks, not its journals") {
    val names = journals("bounded", 50)
    val ckpt = checkpoint()
    val opts = options("bounded", "minPartitions" -> "2")
    val dir = java.nio.file.Paths.get(ckpt, "sources", "0", "sequencer")
    def files(): Set[String] =
      if (!Files.exists(dir)) Set.empty
      else Files.walk(dir).iterator().asScala.map(_.toString).filter(_.endsWith(SequencerStateStore.Suffix)).toSet
    withScripts(names) { w =>
      var rows = Seq.empty[MessageKey]
      var before = files()
      for (round <- 0 until 4) {
        w.foreach(_.commit(round % 3).sync())
        val (read, tasks) = run(opts, ckpt)
        rows ++= read
        val after = files()
        assert(tasks == Seq(2L), s"round $round: $tasks")
        assert((after -- before).size <= 2, s"round $round wrote ${(after -- before).size} state files")
        assert(after.size <= 4, s"round $round left ${after.size} state files")
        before = after
      }
      assertSameMessages(rows, expected(names))
      assert(SequencerStates.of(ckpt).map(_.journal).distinct.sorted == names)
      val batches = Files.list(dir.resolve(SequencerStateStore.BatchesName)).iterator().asScala.toList
      assert(batches.size <= 2, s"batch directories kept: $batches")
    }
  }
}
