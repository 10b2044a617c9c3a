package io.sparkgazette.spark
package source

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.concurrent.ConcurrentHashMap

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.Random

import io.sparkgazette.client.protocol.ApplyRequest
import io.sparkgazette.message.Framing
import io.sparkgazette.spark.source.offsets.{JournalOffsets, JournalPosition}
import io.sparkgazette.spark.source.reading.SourceMetrics
import io.sparkgazette.spark.testing.BatchPolicy
import io.sparkgazette.spark.testing.BatchPolicy.{Limit, ReadAll, Skip}
import io.sparkgazette.testing.{Journals, Judge, JudgeRecord, JudgeScript, SparkClusterSuite}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.QueryExecution
import org.apache.spark.sql.execution.datasources.v2.MicroBatchScanExec
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

/** Random schedules against the source's exactly-once promise. A schedule is one journal's
  * history: Gazette's own Publisher appends transactions, rollbacks, duplicates and messages
  * without a UUID, lines that are not JSON come between them (read with failOnMalformed=false,
  * and by Gazette's reader passing over them), its producers' clocks may jump past the prune
  * horizon, and the journal may be
  * deleted and created again; in between, a query over the journal (and the other schedules of
  * its group) runs AvailableNow from its checkpoint, with a random `maxBytesPerTrigger` and
  * packing of journals into tasks, from the journals' first bytes or from offsets inside their
  * history, reading some batches in full, some only through `limit(1)`, and some not at all.
  *
  * The expected output is what Gazette's ReadCommittedIter yields over the same bytes (from the
  * same starting offsets), batch by batch: a batch read in full holds, with their bytes, exactly
  * the messages whose commit (the ACK, or the message itself outside a transaction) ends in it.
  * A run also counts the cases that make schedules worth running (transactions spanning batches,
  * duplicates, rollbacks, replays, rebuilds, re-creations, clock jumps, starts inside a history),
  * and fails if one never happened.
  *
  * `SPARKGAZETTE_SCHEDULES=N` (default 80) and `SPARKGAZETTE_SEED=S` in the environment choose the
  * schedules (`make test-source-properties SCHEDULES=5000`); any failure, a query's included,
  * names the seed of its group and how to run that group alone.
  */
class SourcePropertyIntegrationSuite extends AnyFunSuite with SparkClusterSuite {
  import SourcePropertyIntegrationSuite._

  private val schedules = sys.env.get("SPARKGAZETTE_SCHEDULES").map(_.toInt).getOrElse(80)
  private val baseSeed = sys.env.get("SPARKGAZETTE_SEED").map(_.toLong).getOrElse(20261122L)
  private val perQuery = 8

  override protected def sparkMaster: String = "local[2]"

  test(s"random schedules: every committed message of a batch read in full exactly once, as Gazette reads them") {
    val groups = (schedules + perQuery - 1) / perQuery
    val seen = new Cases
    for (g <- 0 until groups) {
      val seed = baseSeed + g
      val n = math.min(perQuery, schedules - g * perQuery)
      replayable(seed, s"make test-source-properties SEED=$seed SCHEDULES=$n")(new Group(seed, n, seen).run())
      if (groups > 25 && (g + 1) % 25 == 0) println(s"source schedules: ${(g + 1) * perQuery} of $schedules passed")
    }
    info(s"$schedules schedules in $groups queries: $seen")
    assert(seen.judged > schedules, s"only ${seen.judged} committed messages judged over $schedules schedules")
    // A short run (a replayed seed) need not meet every case; the suite's own run must.
    if (schedules >= 100) {
      val never = seen.all.collect { case (name, 0L) => name }
      assert(never.isEmpty, s"over $schedules schedules, never: ${never.mkString(", ")} ($seen)")
    }
  }

  /** Runs 1/`share` of the schedules in queries of `perQuery`, each seeded past `seeds`, and
    * requires more messages judged than schedules run; what the queries met, for the caller's checks.
    */
  private def groups(share: Int, seeds: Long)(group: (Long, Cases) => Group): Cases = {
    val n = math.max(1, schedules / share / perQuery)
    val seen = new Cases
    for (g <- 0 until n) {
      val seed = baseSeed + seeds + g
      replayable(seed, s"make test-source-properties SEED=${seed - seeds} SCHEDULES=$perQuery")(group(seed, seen).run())
    }
    info(s"${n * perQuery} schedules in $n queries: $seen")
    assert(seen.judged > n * perQuery, s"only ${seen.judged} messages judged over ${n * perQuery} schedules")
    seen
  }

  // Read uncommitted, a large range of ndjson is split into pieces read by separate tasks.
  test(
    "random schedules read uncommitted, ranges split into small pieces: every message of a batch read in full exactly once") {
    val seen = groups(share = 8, seeds = 100000)((seed, seen) => new Group(seed, perQuery, seen, committed = false))
    assert(seen.split > 0, "no batch split a range")
  }

  // Read committed, a large range of ndjson is split into pieces too, each sequenced from the states a
  // first pass finds at its start: schedules of mostly ndjson journals, with small pieces.
  test("random schedules read committed, ranges split into small pieces: every committed message of a batch read " +
    "in full exactly once, as Gazette reads them") {
    val seen = groups(share = 5, seeds = 200000)((seed, seen) => new Group(seed, perQuery, seen, splitting = true))
    assert(seen.split > 0, "no batch split a range")
    assert(seen.metric(SourceMetrics.TransactionsAcrossPieces) > 0, s"no transaction open where a piece began ($seen)")
    assert(seen.metric(SourceMetrics.DuplicatesDropped) > 0 && seen.metric(SourceMetrics.RolledBackMessages) > 0,
      seen.toString)
  }

  // Any failure of a group, a query that dies included, names its seed.
  private def replayable(seed: Long, how: String)(body: => Unit): Unit =
    try body
    catch {
      case e: Throwable if scala.util.control.NonFatal(e) =>
        fail(s"[seed $seed: run this group alone with $how] ${e.getMessage}", e)
    }

  private final class Group(seed: Long, n: Int, seen: Cases, committed: Boolean = true, splitting: Boolean = false) {
    private val rnd = new Random(seed)
    private val prefix = s"prop/$seed"
    private val app = s"prop-$seed"
    private val framings =
      if (splitting) Seq(Framing.JsonLines, Framing.JsonLines, Framing.JsonLines, Framing.Csv)
      else if (committed) Seq(Framing.JsonLines, Framing.Csv, Framing.ProtobufFixed)
      else Seq(Framing.JsonLines, Framing.JsonLines, Framing.JsonLines, Framing.Csv, Framing.ProtobufFixed)
    private val journals = (0 until n).map(i => s"$prefix/j$i" -> framings(rnd.nextInt(framings.size)))
    private val framing = journals.toMap
    private val recreating = rnd.nextInt(3) == 0
    // Queries of other groups start at offsets inside the journals' histories (not with re-creation:
    // the offsets would name bytes of the journal deleted before the query first ran).
    private val startsInside = !recreating && rnd.nextInt(3) == 0
    private val jumping = rnd.nextInt(3) == 0
    // Lines that are not JSON, in ndjson journals, skipped by the query as by Gazette's reader told to.
    private val malformed = rnd.nextInt(3) == 0
    private val ckpt = Files.createTempDirectory("gazette-prop").toString
    private val packing =
      // Read committed, ranges are split until there are minPartitions tasks, into pieces of at
      // least bytesPerPartition.
      if (splitting) Map("bytesPerPartition" -> Seq("60", "120", "250")(rnd.nextInt(3)),
        "minPartitions" -> (n + 1 + rnd.nextInt(8)).toString)
      else if (!committed) Map("bytesPerPartition" -> Seq("60", "250", "1000")(rnd.nextInt(3)),
        "minPartitions" -> (1 + rnd.nextInt(6)).toString)
      else if (rnd.nextBoolean())
        // Small enough for an ndjson journal's range to be split into pieces, each sequenced from
        // the states a first pass finds at its start (PieceStates), or for several ranges a task.
        Map("bytesPerPartition" -> Seq("120", "1000", "100000")(rnd.nextInt(3)),
          "minPartitions" -> (1 + rnd.nextInt(6)).toString)
      else Map.empty[String, String]
    private val options = Map(
      "broker" -> cluster.broker,
      "selector" -> s"app=$app",
      "failOnDataLoss" -> (!recreating).toString,
      "failOnMalformed" -> (!malformed).toString,
      "sequencerRingSize" -> Seq("8", "64", "8192")(rnd.nextInt(3))
    ) ++ packing ++ (if (committed) Map.empty else Map("readCommitted" -> "false"))
    // Where the query starts reading each journal: its first byte unless `startsInside`.
    private var starts = Map.empty[String, Long]

    private val scripts = mutable.Map[String, JudgeScript]()
    private val producers = mutable.Map[String, Int]()
    // Producers whose clock jumped and who have not committed since: Gazette prunes such a
    // producer at a checkpoint, after which a re-sent old message reads as new, by design. The
    // schedule re-sends none of theirs, as Gazette's single pass (which never prunes) would differ.
    private val jumped = mutable.Map[String, Set[Int]]().withDefaultValue(Set.empty)
    private val jumps = mutable.Map[String, Int]().withDefaultValue(0)
    // Each incarnation of each journal: its creating revision and what Gazette's reader made of it.
    private val incarnations = mutable.Buffer[(String, Long, Seq[JudgeRecord])]()
    private val batches = mutable.Map[Long, Batch]()
    private var nextBatch = 0L

    def run(): Unit = {
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
          if (batches.isEmpty && starts.isEmpty) starts = chooseStarts()
          query(drain = false)
        }
        journals.foreach { case (j, _) => (0 until producers(j)).foreach(p => scripts(j).ack(p)) }
        scripts.values.foreach(_.sync())
        query(drain = true)
        journals.foreach { case (j, _) =>
          incarnations += ((j, revision(j), read(j)))
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

    // Where each journal is first read: with `startsInside`, a message boundary of its history so far
    // (the first, one inside, or its end, as `latest` would), else its first byte.
    private def chooseStarts(): Map[String, Long] =
      if (!startsInside) Map.empty
      else journals.map { case (j, _) =>
        val bounds = 0L +: Judge.read(cluster.broker, j, committed = false, skipMalformed = malformed).map(_.end)
        j -> bounds(rnd.nextInt(bounds.size))
      }.toMap

    private def startingOffsets: String =
      if (!startsInside) "earliest"
      else if (starts.values.forall(_ == 0L)) "earliest"
      else JournalOffsets.toJson(starts.map { case (j, o) => j -> JournalPosition(o) }).replaceAll(
        """\{"offset":(\d+),"revision":0,"origin":-1\}""", "$1")

    // Gazette's reader over the journal's current incarnation, from where the query began it.
    private def read(j: String): Seq[JudgeRecord] =
      Judge.read(cluster.broker, j, committed, acks = true,
        from = if (incarnations.exists(_._1 == j)) 0L else starts.getOrElse(j, 0L), skipMalformed = malformed)

    private def recreate(j: String, ct: String): Unit = {
      scripts(j).sync()
      incarnations += ((j, revision(j), read(j)))
      scripts.remove(j).foreach(_.close())
      delete(j)
      create(j, ct)
    }

    private def op(j: String): Unit = {
      val w = scripts(j)
      val p = rnd.nextInt(producers(j))
      val stale = jumped(j)(p)
      rnd.nextInt(100) match {
        case r if r < 3 && jumping =>
          // Past the default producerPruneHorizon (24 hours): producers idle since are pruned.
          jumps(j) += 1
          w.clock(ScriptEpochMillis + jumps(j) * 25L * 3600 * 1000)
          jumped(j) = (0 until producers(j)).toSet
          seen.clockJumps += 1
        case r if r < 15 || stale && r >= 75 && r < 92 => w.commit(p); jumped(j) -= p
        case r if r < 60 => w.continue(p)
        case r if r < 75 => w.ack(p); jumped(j) -= p
        case r if r < 80 => w.rollback(p, rnd.nextInt(1 << 20))
        case r if r < 92 => w.dup(p, rnd.nextInt(1 << 20))
        case r if r >= 97 && malformed && framing(j) == Framing.JsonLines => w.raw("not json\n".getBytes(UTF_8))
        case _ => w.noUuid()
      }
    }

    private def revision(j: String): Long = client.list(s"name=$j").head.createRevision

    private def delete(j: String): Unit = client.apply(Seq(ApplyRequest.Change(expectModRevision = -1, delete = j)))

    /** One AvailableNow run: batches are read in full, through limit(1), or not at all. */
    private def query(drain: Boolean): Unit = {
      val maxBytes = if (drain) None else Seq(None, Some(1500L), Some(4000L), Some(20000L))(rnd.nextInt(4))
      val policies = new ConcurrentHashMap[Long, BatchPolicy]()
      val rows = new ConcurrentHashMap[Long, Seq[Row]]()
      val policySeed = rnd.nextLong()
      val metrics = new ConcurrentHashMap[Long, Map[String, Long]]()
      val name = s"$app-${batches.size}"
      val q = spark.readStream.format("gazette").options(
        options ++ maxBytes.map("maxBytesPerTrigger" -> _.toString) + ("startingOffsets" -> startingOffsets)).load()
        .writeStream.queryName(name).option("checkpointLocation", ckpt).trigger(Trigger.AvailableNow())
        .foreachBatch { (df: DataFrame, id: Long) =>
          val policy = if (drain) ReadAll
          else new Random(policySeed + id).nextInt(10) match {
            case r if r < 6 => ReadAll
            case r if r < 8 => Skip
            case _ => Limit(1)
          }
          policies.put(id, policy)
          policy match {
            case ReadAll =>
              val read = df.select("journal", "begin", "end", "uuid", "value")
              rows.put(
                id,
                read.collect().toSeq.map(r =>
                  Row(r.getString(0), r.getLong(1), r.getLong(2), Option(r.getString(3)).getOrElse(""),
                    payload(framing(r.getString(0)), r.getAs[Array[Byte]](4))))
              )
              metrics.put(id, taskMetrics(spark, name))
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
        val tasks = s.metrics.get("tasks").toInt
        if (tasks > ranges) seen.split += 1
        if (tasks > 0 && tasks < ranges) seen.packed += 1
        Option(metrics.get(p.batchId)).foreach(seen.add)
      }
      nextBatch = (batches.keys ++ Seq(nextBatch - 1)).max + 1
    }

    /** Compares each batch read in full with what it should hold: the messages whose commit ends in it. */
    private def judge(): Unit = {
      val expected = mutable.Map[Long, Vector[Row]]().withDefaultValue(Vector.empty)
      val reads = batches.toSeq.filter(_._2.policy == ReadAll)
      // Every commit lies in some batch, read or not: the batches cover the journal's last
      // incarnation from where the query entered it to its end, and an earlier one up to where
      // the query last saw it (what came after went with it).
      val uncovered = mutable.Buffer[(String, Long, Long)]()
      incarnations.zipWithIndex.foreach { case ((j, rev, records), i) =>
        def holds(b: Batch, commitEnd: Long) =
          (for (s <- b.start.get(j); e <- b.end.get(j))
            yield s.revision == rev && e.revision == rev && commitEnd > s.offset && commitEnd <= e.offset).getOrElse(
            false)
        val later = incarnations.indexWhere(_._1 == j) < i
        val last = incarnations.lastIndexWhere(_._1 == j) == i
        val seenTo = batches.values.flatMap(_.end.get(j)).filter(_.revision == rev).map(_.offset).reduceOption(_ max _)
        (if (committed) commits(records) else records.map(r => r -> r.end)).foreach { case (r, commitEnd) =>
          if ((last || seenTo.exists(commitEnd <= _)) && !batches.values.exists(holds(_, commitEnd)))
            uncovered += ((j, rev, commitEnd))
          reads.find { case (_, b) => holds(b, commitEnd) }.foreach { case (id, b) =>
            expected(id) :+= Row(r.journal, r.begin, r.end, r.uuid, r.payload)
            if (r.end <= b.start(j).offset) seen.spanning += 1
            if (later) seen.recreatedRead += 1
            if (starts.getOrElse(j, 0L) > 0) seen.startedInside += 1
          }
        }
      }
      if (uncovered.nonEmpty)
        fail(s"${uncovered.size} commits in no batch (journal, revision, commit offset): ${uncovered.take(5)}\n" +
          batches.toSeq.sortBy(_._1).map { case (id, b) => s"batch $id ${b.policy}: ${b.start} -> ${b.end}" }
            .mkString("\n"))
      val wrong = reads.flatMap { case (id, b) =>
        val extra = b.rows.diff(expected(id))
        val missing = expected(id).diff(b.rows)
        if (extra.isEmpty && missing.isEmpty) None
        else Some(s"batch $id: ${extra.size} rows not expected (or repeated): ${extra.take(3)}; ${missing.size} " +
          s"expected rows missing: ${missing.take(3)}")
      }
      if (wrong.nonEmpty) {
        val plan = batches.toSeq.sortBy(_._1).map { case (id, b) =>
          s"batch $id ${b.policy}: ${b.start.map { case (j, s) =>
              s"$j ${s.offset}..${b.end.get(j).map(_.offset).getOrElse("-")}"
            }.mkString(", ")}"
        }
        fail(s"${wrong.mkString("\n")}\nstarting offsets: $startingOffsets\n${plan.mkString("\n")}")
      }
      seen.judged += expected.values.map(_.size).sum
    }
  }
}

object SourcePropertyIntegrationSuite {

  /** A row as the suite compares it: the message's key and its bytes, as Gazette's judge prints them. */
  final case class Row(journal: String, begin: Long, end: Long, uuid: String, payload: String)

  final case class Batch(policy: BatchPolicy, start: Map[String, JournalPosition], end: Map[String, JournalPosition],
      rows: Seq[Row])

  // The clock tests/judge/script.go starts its producers at: 2026-11-22T12:00:00Z.
  private val ScriptEpochMillis = 1795348800000L

  /** What the judge prints of a message's bytes: the JSON line, the CSV fields after the UUID's, or
    * the protobuf payload in hex.
    */
  def payload(contentType: String, value: Array[Byte]): String = contentType match {
    case Framing.Csv =>
      val line = new String(value, UTF_8).stripSuffix("\n").stripSuffix("\r")
      line.substring(line.indexOf(',') + 1)
    case Framing.ProtobufFixed => value.map(b => f"${b & 0xff}%02x").mkString
    case _ => new String(value, UTF_8).stripSuffix("\n").stripSuffix("\r")
  }

  /** The source's task metrics of the running batch of the query named `name`, summed over its
    * scans (a foreachBatch's DataFrame is a scan of an RDD: the source's scan is in the query's plan).
    */
  def taskMetrics(spark: org.apache.spark.sql.SparkSession, name: String): Map[String, Long] = {
    val query = spark.streams.active.find(_.name == name).get
    // The query's execution, whose package moved in Spark 4.1.
    val execution = query.getClass.getMethod("streamingQuery").invoke(query)
    val plan = execution.getClass.getMethod("lastExecution").invoke(execution).asInstanceOf[QueryExecution].executedPlan
    plan.collect { case s: MicroBatchScanExec => s.metrics }.flatten
      .filter { case (name, _) => SourceMetrics.Names.contains(name) }
      .groupBy(_._1).map { case (name, metrics) => name -> metrics.map(_._2.value).sum }
  }

  /** How often a run met each case worth running. */
  final class Cases {
    var judged, split, packed, spanning, recreatedRead, startedInside, clockJumps = 0L
    private val metrics = mutable.Map[String, Long]().withDefaultValue(0L)

    def add(batch: Map[String, Long]): Unit = synchronized {
      batch.foreach { case (k, v) => metrics(k) += v }
    }

    /** The cases a committed run must meet. */
    def all: Seq[(String, Long)] = Seq(
      "transactions spanning batches" -> spanning,
      "batches packing journals" -> packed,
      "rows of re-created journals" -> recreatedRead,
      "rows past a start inside a history" -> startedInside,
      "clock jumps" -> clockJumps
    ) ++ Seq(
      SourceMetrics.DuplicatesDropped,
      SourceMetrics.RolledBackMessages,
      SourceMetrics.ReplayedBytes,
      SourceMetrics.RebuiltBytes,
      SourceMetrics.MalformedSkipped
    ).map(m => m -> metrics(m))

    /** A count of the run's task metrics. */
    def metric(name: String): Long = synchronized(metrics(name))

    override def toString: String =
      (Seq("messages judged" -> judged, "batches splitting ranges" -> split) ++ all ++
        Seq(SourceMetrics.TransactionsAcrossPieces -> metrics(SourceMetrics.TransactionsAcrossPieces))).map {
        case (k, v) =>
          s"$k $v"
      }.mkString(", ")
  }

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
