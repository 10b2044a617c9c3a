package io.sparkgazette.spark
package source

import java.nio.file.Files
import java.util.concurrent.ConcurrentHashMap

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.Random

import io.sparkgazette.client.protocol.ApplyRequest
import io.sparkgazette.message.Framing
import io.sparkgazette.spark.testing.BatchPolicy.{Limit, ReadAll, Skip}
import io.sparkgazette.spark.testing.{BatchPolicy, MessageKey}
import io.sparkgazette.testing.{Journals, Judge, JudgeRecord, JudgeScript, SparkClusterSuite}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

/** Random schedules against the source's exactly-once promise. A schedule is one journal's
  * history: Gazette's own Publisher appends transactions, rollbacks, duplicates and messages
  * without a UUID, and the journal may be deleted and created again; in between, a query over
  * the journal (and the other schedules of its group) runs AvailableNow from its checkpoint, with
  * a random `maxBytesPerTrigger`, reading some batches in full, some only through `limit(1)`, and
  * some not at all.
  *
  * The expected output is what Gazette's ReadCommittedIter yields over the same bytes, restricted
  * to the transactions whose commit (the ACK, or the message itself outside a transaction) ends
  * in a batch that was read in full: each of those exactly once, nothing else.
  *
  * `SPARKGAZETTE_SCHEDULES=N` (default 200) and `SPARKGAZETTE_SEED=S` in the environment choose the
  * schedules (`make test-source-properties SCHEDULES=5000`); a failure names the seed of its group
  * and how to run that group alone.
  */
class SourcePropertyIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  import SourcePropertyIntegrationSuite._

  private val schedules = sys.env.get("SPARKGAZETTE_SCHEDULES").map(_.toInt).getOrElse(200)
  private val baseSeed = sys.env.get("SPARKGAZETTE_SEED").map(_.toLong).getOrElse(20261122L)
  private val perQuery = 8

  override protected def sparkMaster: String = "local[2]"

  test(s"random schedules: every committed message of a batch read in full exactly once, as Gazette reads them") {
    val groups = (schedules + perQuery - 1) / perQuery
    var judged = 0
    for (g <- 0 until groups) {
      val seed = baseSeed + g
      val n = math.min(perQuery, schedules - g * perQuery)
      withClue(s"[seed $seed: run this group alone with make test-source-properties SEED=$seed SCHEDULES=$n] ") {
        judged += new Group(seed, n).run()
      }
      if (groups > 25 && (g + 1) % 25 == 0) println(s"source schedules: ${(g + 1) * perQuery} of $schedules passed")
    }
    info(s"$schedules schedules in $groups queries, $judged committed messages judged")
    assert(judged > schedules, s"only $judged committed messages judged over $schedules schedules")
  }

  // Read uncommitted, a large range of ndjson is split into pieces read by separate tasks.
  test(
    "random schedules read uncommitted, ranges split into small pieces: every message of a batch read in full exactly once") {
    val groups = math.max(1, schedules / 8 / perQuery)
    var judged, split = 0
    for (g <- 0 until groups) {
      val seed = baseSeed + 100000 + g
      withClue(
        s"[seed $seed: run this group alone with make test-source-properties SEED=${seed - 100000} SCHEDULES=$perQuery] ") {
        val group = new Group(seed, perQuery, committed = false)
        judged += group.run()
        split += group.splitBatches
      }
    }
    info(
      s"${groups * perQuery} schedules in $groups queries, $judged messages judged, $split batches with split ranges")
    assert(judged > groups * perQuery, s"only $judged messages judged over ${groups * perQuery} schedules")
    assert(split > 0, "no batch split a range")
  }

  private final class Group(seed: Long, n: Int, committed: Boolean = true) {
    private val rnd = new Random(seed)
    private val prefix = s"prop/$seed"
    private val app = s"prop-$seed"
    private val framings =
      if (committed) Seq(Framing.JsonLines, Framing.Csv, Framing.ProtobufFixed)
      else Seq(Framing.JsonLines, Framing.JsonLines, Framing.JsonLines, Framing.Csv, Framing.ProtobufFixed)
    private val journals = (0 until n).map(i => s"$prefix/j$i" -> framings(rnd.nextInt(framings.size)))
    private val recreating = rnd.nextInt(3) == 0
    private val ckpt = Files.createTempDirectory("gazette-prop").toString
    private val options = Map(
      "broker" -> cluster.broker,
      "selector" -> s"app=$app",
      "startingOffsets" -> "earliest",
      "failOnDataLoss" -> (!recreating).toString,
      "sequencerRingSize" -> Seq("8", "64", "8192")(rnd.nextInt(3))
    ) ++
      (if (committed) Map.empty
       else Map("readCommitted" -> "false", "bytesPerPartition" -> Seq("60", "250", "1000")(rnd.nextInt(3)),
         "minPartitions" -> (1 + rnd.nextInt(6)).toString))

    /** Batches that ran more tasks than they had journals with new bytes. */
    var splitBatches = 0

    private val scripts = mutable.Map[String, JudgeScript]()
    private val producers = mutable.Map[String, Int]()
    // Each incarnation of each journal: its creating revision and what Gazette's reader made of it.
    private val incarnations = mutable.Buffer[(String, Long, Seq[JudgeRecord])]()
    private val batches = mutable.Map[Long, Batch]()
    private var nextBatch = 0L

    def run(): Int = {
      journals.foreach { case (j, ct) => create(j, ct) }
      try {
        for (_ <- 0 until 2 + rnd.nextInt(4)) {
          journals.foreach { case (j, _) => (0 until rnd.nextInt(14)).foreach(_ => op(j)) }
          if (recreating && rnd.nextInt(3) == 0) {
            val (j, ct) = journals(rnd.nextInt(n))
            recreate(j, ct)
            (0 until rnd.nextInt(6)).foreach(_ => op(j))
          }
          scripts.values.foreach(_.sync())
          query(drain = false)
        }
        journals.foreach { case (j, _) => (0 until producers(j)).foreach(p => scripts(j).ack(p)) }
        scripts.values.foreach(_.sync())
        query(drain = true)
        journals.foreach { case (j, _) =>
          incarnations += ((j, revision(j), Judge.read(cluster.broker, j, committed, acks = true)))
        }
        judge()
      } finally {
        scripts.values.foreach(s =>
          try s.close()
          catch { case _: Exception => })
        journals.foreach { case (j, _) => delete(j) }
      }
    }

    private var generation = 0

    // Each incarnation gets its own fragment store: in the old one, a journal created again would
    // find the old journal's persisted fragments and continue at their end.
    private def create(j: String, ct: String): Unit = {
      generation += 1
      Files.createDirectories(java.nio.file.Paths.get(cluster.fragmentRoot, s"g$generation"))
      Journals.create(
        client, Journals.spec(j, labels = Seq("content-type" -> ct, "app" -> app), store = s"file:///g$generation/"))
      scripts(j) = Judge.script(cluster.broker, j)
      producers(j) = 1 + rnd.nextInt(4)
    }

    private def recreate(j: String, ct: String): Unit = {
      scripts(j).sync()
      incarnations += ((j, revision(j), Judge.read(cluster.broker, j, committed, acks = true)))
      scripts.remove(j).foreach(_.close())
      delete(j)
      create(j, ct)
    }

    private def op(j: String): Unit = {
      val w = scripts(j)
      val p = rnd.nextInt(producers(j))
      rnd.nextInt(100) match {
        case r if r < 15 => w.commit(p)
        case r if r < 60 => w.continue(p)
        case r if r < 75 => w.ack(p)
        case r if r < 80 => w.rollback(p, rnd.nextInt(1 << 20))
        case r if r < 92 => w.dup(p, rnd.nextInt(1 << 20))
        case _ => w.noUuid()
      }
    }

    private def revision(j: String): Long = client.list(s"name=$j").head.createRevision

    private def delete(j: String): Unit = client.apply(Seq(ApplyRequest.Change(expectModRevision = -1, delete = j)))

    /** One AvailableNow run: batches are read in full, through limit(1), or not at all. */
    private def query(drain: Boolean): Unit = {
      val maxBytes = if (drain) None else Seq(None, Some(1500L), Some(4000L), Some(20000L))(rnd.nextInt(4))
      val policies = new ConcurrentHashMap[Long, BatchPolicy]()
      val rows = new ConcurrentHashMap[Long, Seq[MessageKey]]()
      val policySeed = rnd.nextLong()
      val q = spark.readStream.format("gazette").options(
        options ++ maxBytes.map("maxBytesPerTrigger" -> _.toString)).load()
        .writeStream.option("checkpointLocation", ckpt).trigger(Trigger.AvailableNow())
        .foreachBatch { (df: DataFrame, id: Long) =>
          val policy = if (drain) ReadAll
          else new Random(policySeed + id).nextInt(10) match {
            case r if r < 6 => ReadAll
            case r if r < 8 => Skip
            case _ => Limit(1)
          }
          policies.put(id, policy)
          policy match {
            case ReadAll => rows.put(
                id,
                df.select("journal", "begin", "end", "uuid").collect().toSeq
                  .map(r => (r.getString(0), r.getLong(1), r.getLong(2), Option(r.getString(3)).getOrElse("")))
              )
            case Limit(n) => df.limit(n).collect()
            case Skip =>
          }
          ()
        }.start()
      try {
        if (!q.awaitTermination(120000)) fail(s"the query did not finish: ${q.recentProgress.lastOption.map(_.json)}")
      } finally q.stop()
      for (p <- q.recentProgress if p.batchId >= nextBatch && policies.containsKey(p.batchId)) {
        val s = p.sources.head
        val end = JournalOffsets.parsePositions(s.endOffset)
        val start = Option(s.startOffset).map(JournalOffsets.parsePositions)
          .getOrElse(end.map { case (j, e) => j -> JournalPosition(e.origin, e.revision, e.origin) })
        batches(p.batchId) = Batch(policies.get(p.batchId), start, end, rows.asScala.getOrElse(p.batchId, Nil))
        val ranges = end.count { case (j, e) => start.get(j).exists(_.offset < e.offset) }
        if (s.metrics.get("tasks").toInt > ranges) splitBatches += 1
      }
      nextBatch = (batches.keys ++ Seq(nextBatch - 1)).max + 1
    }

    /** Compares the rows of the batches read in full with what they should hold. */
    private def judge(): Int = {
      val ours = batches.values.toSeq.flatMap(_.rows)
      val expected = incarnations.toSeq.flatMap { case (j, rev, records) =>
        (if (committed) commits(records) else records.map(r => r -> r.end)).filter { case (_, commitEnd) =>
          batches.values.exists { b =>
            b.policy == ReadAll &&
            (for (s <- b.start.get(j); e <- b.end.get(j))
              yield s.revision == rev && e.revision == rev && commitEnd > s.offset && commitEnd <= e.offset).getOrElse(
              false)
          }
        }.map { case (r, _) => (r.journal, r.begin, r.end, r.uuid) }
      }
      val extra = ours.diff(expected)
      val missing = expected.diff(ours)
      if (extra.nonEmpty || missing.nonEmpty) {
        val plan = batches.toSeq.sortBy(_._1).map { case (id, b) =>
          s"batch $id ${b.policy}: ${b.start.map { case (j, s) =>
              s"$j ${s.offset}..${b.end.get(j).map(_.offset).getOrElse("-")}"
            }.mkString(", ")}"
        }
        fail(
          s"${extra.size} rows not expected (or repeated): ${extra.take(5)}; ${missing.size} expected rows missing: " +
            s"${missing.take(5)}\n${plan.mkString("\n")}")
      }
      expected.size
    }
  }
}

object SourcePropertyIntegrationSuite {
  final case class Batch(policy: BatchPolicy, start: Map[String, JournalPosition], end: Map[String, JournalPosition],
      rows: Seq[MessageKey])

  /** Gazette's committed records (ACKs included, each last in its sequence) with the end offset
    * of the message that committed them; ACKs themselves left out.
    */
  def commits(records: Seq[JudgeRecord]): Seq[(JudgeRecord, Long)] = {
    val out = mutable.Buffer[(JudgeRecord, Long)]()
    val open = mutable.Buffer[JudgeRecord]()
    records.foreach { r =>
      if (r.uuid.nonEmpty && r.flags == 1) open += r
      else if (r.uuid.nonEmpty && r.flags == 2) { open.foreach(m => out += (m -> r.end)); open.clear() }
      else out += (r -> r.end)
    }
    out.toSeq
  }
}
