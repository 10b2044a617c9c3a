package io.sparkgazette.spark
package source
package state

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import io.sparkgazette.message.{ProducerId, ProducerState, Sequencer}
import io.sparkgazette.spark.source.offsets.JournalPosition
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/** The state store on the local file system: its format, what it keeps and what it refuses. */
class SequencerStateStoreSuite extends AnyFunSuite {
  private val J = "events/part-000"
  private val K = "events/part-001"

  private def store(dir: Path = Files.createTempDirectory("gazette-states"), conf: Configuration = new Configuration())
      : (SequencerStateStore, Path) = {
    val s = new SequencerStateStore(dir.toString, conf)
    s.initialize()
    (s, dir)
  }

  private val R = 5L // the journal entry's creating revision
  private val O = 0L // and its origin

  private def state(resume: Long, n: Int, revision: Long = R, journal: String = J) =
    SequencerState(resume,
      (0 until n).map(i =>
        ProducerState(journal, ProducerId(0x100000L + i), 1000L + i, if (i % 3 == 0) 77L + i else -1L)),
      revision, O)

  private def pos(offset: Long, revision: Long = R) = JournalPosition(offset, revision, O)

  // The state files under the store's directory (checksum files left out).
  private def stateFiles(dir: Path): Seq[String] =
    Files.walk(dir).iterator().asScala.filter(p =>
      Files.isRegularFile(p) && p.toString.endsWith(SequencerStateStore.Suffix))
      .map(p => dir.relativize(p).toString).toSeq.sorted

  // The records of forgotten states.
  private def records(dir: Path): Seq[Path] =
    Files.list(dir.resolve("forgotten")).iterator().asScala.filter(_.getFileName.toString.endsWith(".json")).toList

  test("a task's states round-trip through one file, and the first attempt to save it wins") {
    val (s, _) = store()
    val f = SequencerStateStore.taskFile(SequencerStateStore.batchDir(Map(J -> pos(10), K -> pos(20))), Nil)
    assert(s.index(f).isEmpty)
    assert(s.save(f, Seq((J, 10L, state(9, 5)), (K, 20L, state(20, 2, journal = K)), (J, 4L, state(4, 0)))))
    val refs = s.index(f).get
    assert(refs.map(r => (r.journal, r.offset)) == Seq((J, 10L), (K, 20L), (J, 4L)))
    assert(refs.map(s.load) == Seq(state(9, 5), state(20, 2, journal = K), state(4, 0)))
    assert(!s.save(f, Seq((J, 10L, state(10, 1)))), "a later attempt must keep the saved states")
    assert(s.load(s.index(f).get.head) == state(9, 5))
    s.close()
  }

  test("the catalog finds the state at an offset, or the newest in range, of the journal's entry alone") {
    val (s, _) = store()
    val b1 = SequencerStateStore.batchDir(Map(J -> pos(10)))
    val b2 = SequencerStateStore.batchDir(Map(J -> pos(20)))
    s.save(s"$b1/t1.states", Seq((J, 10L, state(10, 1)), (J, 15L, state(15, 1, revision = 4))))
    s.save(s"$b2/t1.states", Seq((J, 20L, state(20, 2)), (K, 20L, state(20, 1, journal = K))))
    val c = new SequencerStateCatalog(s)
    assert(c.lookup(J, 0, 20, R, O).map(_.offset).contains(20L))
    assert(c.lookup(J, 0, 19, R, O).map(_.offset).contains(10L))
    assert(c.lookup(J, 11, 19, R, O).isEmpty)
    assert(c.lookup(J, 0, 15, 4, O).map(_.offset).contains(15L) && c.lookup(J, 0, 15, R, 3).isEmpty)
    c.forget(Seq(K))
    assert(c.lookup(K, 0, 20, R, O).isEmpty)
  }

  test("of two files with a state at the same key, the one written first wins") {
    val (s, _) = store()
    val b = SequencerStateStore.batchDir(Map(J -> pos(10)))
    s.save(s"$b/first.states", Seq((J, 10L, state(10, 1))))
    Thread.sleep(1100) // file times in whole seconds on some file systems
    s.save(s"$b/0-second.states", Seq((J, 10L, state(10, 3))))
    val c = new SequencerStateCatalog(s)
    assert(c.lookup(J, 0, 10, R, O).map(s.load).contains(state(10, 1)))
    c.prune(Map(J -> pos(10)), Map.empty)
    assert(c.files == Set(s"$b/first.states"), "the losing file is deleted")
  }

  test(
    "prune keeps the newest state at or below the committed offset and those above, deleting files and batch directories no kept state is in") {
    val (s, dir) = store()
    val c = new SequencerStateCatalog(s)
    var batches = Seq.empty[String]
    for (o <- Seq(10L, 20L, 30L, 40L)) {
      val b = SequencerStateStore.batchDir(Map(J -> pos(o), K -> pos(o)))
      batches :+= b
      s.save(SequencerStateStore.taskFile(b, Nil), Seq((J, o, state(o, 1)), (K, o, state(o, 1, journal = K))))
    }
    // A temporary file of a long-dead attempt, and one of an attempt still saving.
    val stale = Files.write(dir.resolve(batches(3)).resolve(".x.states.dead.tmp"), Array[Byte](1, 2))
    Files.setLastModifiedTime(stale, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() - 3600000L))
    val fresh = Files.write(dir.resolve(batches(3)).resolve(".x.states.live.tmp"), Array[Byte](1, 2))
    batches.foreach(b => c.refresh(b))
    assert(!Files.exists(stale) && Files.exists(fresh), "only temporary files of long-dead attempts are removed")
    c.prune(Map(J -> pos(35), K -> pos(25)), Map.empty)
    assert(c.lookup(J, 0, 35, R, O).map(_.offset).contains(30L) && c.lookup(J, 0, 29, R, O).isEmpty)
    assert(c.lookup(K, 0, 25, R, O).map(_.offset).contains(20L) && c.lookup(K, 0, 40, R, O).map(_.offset).contains(40L))
    assert(stateFiles(dir).size == 3 && !Files.exists(dir.resolve(batches(0))),
      "the first batch's file and directory are gone")
    c.prune(Map(J -> pos(35), K -> pos(35)),
      Map.empty) // a batch that saved nothing at its end still leaves the next one a base
    assert(c.lookup(J, 0, 35, R, O).map(_.offset).contains(30L) && stateFiles(dir).size == 2)
    // A journal read afresh (a new entry planned) keeps the new entry's states; one no longer read loses all.
    c.pin(Nil)
    c.prune(Map(J -> pos(35)), Map.empty)
    assert(c.lookup(K, 0, 40, R, O).isEmpty && c.lookup(J, 0, 40, R, O).isDefined)
    val restarted = new SequencerStateCatalog(s)
    assert(restarted.lookup(J, 0, 35, R, O).map(_.offset).contains(30L), "a restarted driver finds what was kept")
  }

  test(
    "a journal restarted at its head with the same origin (its head went back to where the query entered it) finds none of its old states after a driver restart") {
    // The query entered J at 0 (origin 0) and read it to 100; its head went back to 0 for good and,
    // with failOnDataLoss=false, the source starts J over at 0: same revision, same origin.
    val (s, dir) = store()
    val old = SequencerStateStore.batchDir(Map(J -> pos(100), K -> pos(20)))
    s.save(s"$old/t1.states", Seq((J, 100L, state(100, 3)), (K, 20L, state(20, 1, journal = K))))
    val c = new SequencerStateCatalog(s)
    c.refresh(old)
    c.forget(Seq(J)) // what nextOffset does on the restart
    val restarted = Map(J -> pos(0), K -> pos(20)) // K had no new bytes: its state stays in the shared file
    c.prune(restarted, restarted)
    assert(c.lookup(J, 0, 100, R, O).isEmpty)
    // The driver restarts: the catalog reads every batch directory again.
    val after = new SequencerStateCatalog(s)
    after.prune(restarted, restarted)
    assert(after.lookup(J, 0, 100, R, O).isEmpty, "the new entry of J found a state its old entry saved at 100")
    assert(after.lookup(K, 0, 20, R, O).map(_.offset).contains(20L), "K's state in the shared file is kept")
    // The new entry of J saves a state at 100 again, in a file of its own: that one is found.
    val again = SequencerStateStore.batchDir(Map(J -> pos(100), K -> pos(30)))
    s.save(s"$again/t2.states", Seq((J, 100L, state(100, 1)), (K, 30L, state(30, 1, journal = K))))
    after.refresh(again)
    assert(after.lookup(J, 0, 100, R, O).map(_.file).contains(s"$again/t2.states"))
    assert(records(dir).size == 1, "the forgetting is written down")
    // Once K moves past the shared file, the file and the record of what it forgot go.
    val moved = Map(J -> pos(100), K -> pos(30))
    after.prune(moved, moved)
    assert(!Files.exists(dir.resolve(old)) && records(dir).isEmpty)
    val third = new SequencerStateCatalog(s)
    assert(third.lookup(J, 0, 100, R, O).map(_.file).contains(s"$again/t2.states"))
    s.close()
  }

  test("a journal that left the query and came back at the same offset starts without its old states") {
    // Its selector stopped matching J (failOnDataLoss=false), then matched it again: J is new to the
    // query at its first offset, as when the query first entered it.
    val (s, _) = store()
    val old = SequencerStateStore.batchDir(Map(J -> pos(50), K -> pos(20)))
    s.save(s"$old/t.states", Seq((J, 50L, state(50, 2)), (K, 20L, state(20, 1, journal = K))))
    val c = new SequencerStateCatalog(s)
    c.refresh(old)
    c.prune(Map(K -> pos(20)), Map(K -> pos(20))) // J no longer read
    c.forget(Seq(J)) // J read afresh
    c.prune(Map(K -> pos(20)), Map(J -> pos(0), K -> pos(20)))
    val restarted = new SequencerStateCatalog(s)
    assert(restarted.lookup(J, 0, 50, R, O).isEmpty && restarted.lookup(K, 0, 20, R, O).isDefined)
    s.close()
  }

  test(
    "a journal restarted at its head with the same origin does not find the state its last batch saved (calls in the stream's order)") {
    // GazetteMicroBatchStream's order: batch N's tasks save their files; Spark calls latestOffset for
    // N+1 (J's head went back to 0 for good: nextOffset forgets J), writes the offset log, and only
    // then commit(N's end), which is when the catalog first reads N's directory.
    val (s, _) = store()
    val c = new SequencerStateCatalog(s)
    val prev = SequencerStateStore.batchDir(Map(J -> pos(50), K -> pos(10)))
    s.save(s"$prev/t.states", Seq((J, 50L, state(50, 2)), (K, 10L, state(10, 1, journal = K))))
    c.refresh(prev, again = true) // commit(N-1's end)
    c.prune(Map(J -> pos(50), K -> pos(10)), Map(J -> pos(100), K -> pos(20)))
    c.refresh(prev) // planning batch N
    val n = SequencerStateStore.batchDir(Map(J -> pos(100), K -> pos(20)))
    s.save(s"$n/t.states", Seq((J, 100L, state(100, 3)), (K, 20L, state(20, 1, journal = K)))) // batch N's task
    c.forget(Seq(J), justRan = Some(n)) // latestOffset for N+1
    val restarted = Map(J -> pos(0), K -> pos(20))
    c.refresh(n, again = true) // commit(N's end)
    c.prune(Map(J -> pos(100), K -> pos(20)), restarted)
    // N+1 reads nothing of J (0 < 100); latestOffset for N+2 plans J's new entry to 100, then commit(N+1's end).
    c.refresh(SequencerStateStore.batchDir(restarted), again = true)
    c.prune(restarted, Map(J -> pos(100), K -> pos(20)))
    assert(c.lookup(J, 0, 100, R, O).isEmpty, "the new entry of J, at 0, finds its old entry's state at 100")
    assert(new SequencerStateCatalog(s).lookup(J, 0, 100, R, O).isEmpty, "and so does a restarted driver")
    // Batch N+2 (J's new entry, [0, 100)) ends where N ended: same batch directory, and its state at 100
    // loses to the old one (first file wins), so batch N+3 starts from the old entry's producers.
    s.save(s"$n/t2.states", Seq((J, 100L, state(100, 1))))
    c.refresh(n, again = true)
    assert(
      c.lookup(J, 0, 100, R, O).map(_.file).contains(s"$n/t2.states"), "batch N+3 does not start from the new state")
    assert(new SequencerStateCatalog(s).lookup(J, 0, 100, R, O).map(_.file).contains(s"$n/t2.states"),
      "nor does a restarted driver")
    s.close()
  }

  test("forgetting a journal hides every copy of its states, not only the copy that won") {
    // Batch N ran twice, packed differently (before and after a restart): two files hold J's state at
    // 100 under the same key, and the catalog keeps the first. K's state is in the second file only.
    val (s, _) = store()
    val old = SequencerStateStore.batchDir(Map(J -> pos(100), K -> pos(20)))
    s.save(s"$old/a.states", Seq((J, 100L, state(100, 3))))
    s.save(s"$old/b.states", Seq((J, 100L, state(100, 3)), (K, 20L, state(20, 1, journal = K))))
    val c = new SequencerStateCatalog(s)
    c.refresh(old)
    assert(c.lookup(J, 0, 100, R, O).map(_.file).contains(s"$old/a.states"))
    c.forget(Seq(J)) // J's head went back to 0 for good: read afresh under the same key
    val restarted = Map(J -> pos(0), K -> pos(20))
    c.prune(restarted, restarted)
    assert(c.lookup(J, 0, 100, R, O).isEmpty)
    val after = new SequencerStateCatalog(s) // the driver restarts
    assert(after.lookup(J, 0, 100, R, O).isEmpty, "the copy of J's old state in the file K keeps is found again")
    s.close()
  }

  test("an old entry's state dropped below the floor, in a file another journal keeps, is not found by the new entry") {
    val (s, _) = store()
    val c = new SequencerStateCatalog(s)
    val b1 = SequencerStateStore.batchDir(Map(J -> pos(50), K -> pos(20)))
    s.save(s"$b1/t.states", Seq((J, 50L, state(50, 2)), (K, 20L, state(20, 1, journal = K)))) // one task, J and K
    c.refresh(b1, again = true)
    val b2 = SequencerStateStore.batchDir(Map(J -> pos(100), K -> pos(20)))
    s.save(s"$b2/t.states", Seq((J, 100L, state(100, 3)))) // K idle
    c.refresh(b2, again = true)
    c.prune(Map(J -> pos(100), K -> pos(20)), Map.empty) // (J, 50) below the floor; b1 kept for K
    c.forget(Seq(J)) // J's head back to 0: the same revision and origin
    val restarted = Map(J -> pos(0), K -> pos(20))
    c.prune(restarted, restarted)
    s.save(s"$b1/u.states", Seq((J, 50L, state(50, 1)))) // the new entry's [0, 50): the same directory
    c.refresh(b1, again = true)
    assert(c.lookup(J, 0, 50, R, O).map(s.load).contains(state(50, 1)))
    val after = new SequencerStateCatalog(s)
    assert(after.lookup(J, 0, 50, R, O).map(s.load).contains(state(50, 1)), "the old entry's state at 50 came back")
  }

  test("forgetting lists the directory of the batch that just ran, not every one") {
    val listed = ListingCountingFileSystem.listings
    val (s, _) = store()
    val c = new SequencerStateCatalog(s)
    val js = (0 until 200).map(i => f"idle/$i%05d")
    js.zipWithIndex.foreach { case (j, i) =>
      val b = SequencerStateStore.batchDir(Map(j -> pos(10L + i)))
      s.save(s"$b/t.states", Seq((j, 10L + i, state(10 + i, 1, journal = j))))
      c.refresh(b, again = true)
    }
    c.prune(js.zipWithIndex.map { case (j, i) => j -> pos(10L + i) }.toMap, Map.empty)
    val conf = new Configuration()
    conf.set("fs.file.impl", classOf[ListingCountingFileSystem].getName)
    conf.setBoolean("fs.file.impl.disable.cache", true)
    val counting = new SequencerStateStore(s.location, conf)
    val d = new SequencerStateCatalog(counting)
    d.lookup(J, 0, 0, R, O) // a restarted driver reads every directory once
    listed.set(0)
    d.forget(Seq("brand/new", js(3)), justRan = Some(SequencerStateStore.batchDir(Map(js(0) -> pos(10)))))
    assert(listed.get == 1, s"${listed.get} listings")
    assert(d.lookup(js(3), 0, 13, R, O).isEmpty && d.lookup(js(4), 0, 14, R, O).isDefined)
  }

  test("pinned files stay while the running batch reads them") {
    val (s, _) = store()
    val b = SequencerStateStore.batchDir(Map(J -> pos(10)))
    s.save(s"$b/t.states", Seq((J, 10L, state(10, 1))))
    val c = new SequencerStateCatalog(s)
    c.pin(c.lookup(J, 0, 10, R, O).toSeq)
    c.prune(Map.empty, Map.empty)
    assert(s.index(s"$b/t.states").isDefined)
    c.pin(Nil)
    c.prune(Map.empty, Map.empty)
    assert(s.index(s"$b/t.states").isEmpty)
  }

  test(
    "files of another format version, and checkpoints of format 1 or an older layout, are refused naming the version") {
    // Without Hadoop's checksum files, so that the test can edit a file as another version would write it.
    val raw = new Configuration()
    raw.set("fs.file.impl", classOf[org.apache.hadoop.fs.RawLocalFileSystem].getName)
    raw.setBoolean("fs.file.impl.disable.cache", true)
    val (s, dir) = store(conf = raw)
    s.save("batches/b/t.states", Seq((J, 10L, state(10, 1))))
    val file = dir.resolve("batches/b/t.states")
    val bytes = Files.readAllBytes(file)
    bytes(7) = 99
    Files.write(file, bytes)
    val e = intercept[IllegalStateException](s.index("batches/b/t.states"))
    assert(e.getMessage.contains("format version 99") && e.getMessage.contains("format 2"), e.getMessage)

    Files.writeString(dir.resolve("source.json"), """{"format": 1}""")
    val one = intercept[IllegalStateException](store(dir)).getMessage
    assert(one.contains("format version 1") && one.contains("new checkpoint location"), one)
    val legacy = Files.createTempDirectory("gazette-states")
    Files.createDirectories(legacy.resolve("events%2Fpart-000"))
    assert(intercept[IllegalStateException](store(legacy)).getMessage.contains("not in a format this connector reads"))
  }

  test("a million producers in one journal's state: at most 64 MiB, saved and loaded in about a second") {
    val (s, dir) = store()
    val big = state(1L << 30, 1000000)
    val t0 = System.nanoTime()
    s.save("batches/b/t.states", Seq((K, 100L, state(100, 3, journal = K)), (J, 100L, big)))
    val t1 = System.nanoTime()
    val loaded = s.load(s.index("batches/b/t.states").get(1))
    val t2 = System.nanoTime()
    val seq = new Sequencer[Array[Byte]](Map(J -> loaded.resume), loaded.producers)
    val t3 = System.nanoTime()
    val (_, again) = seq.checkpoint(0)
    val t4 = System.nanoTime()
    assert(loaded == big && again.size == big.producers.size)
    val size = Files.size(dir.resolve("batches/b/t.states"))
    assert(size <= (64L << 20), s"$size bytes")
    info(f"state of 1,000,000 producers: ${size / 1048576.0}%.1f MiB; save ${(t1 - t0) / 1e6}%.0f ms, load " +
      f"${(t2 - t1) / 1e6}%.0f ms, Sequencer restored ${(t3 - t2) / 1e6}%.0f ms, checkpointed ${(t4 - t3) / 1e6}%.0f ms")
    s.close()
  }

  test("a record of forgotten states damaged past its first entry is refused, naming its file") {
    val (s, dir) = store()
    val records = dir.resolve("forgotten")
    Files.createDirectories(records)
    Files.write(records.resolve("x.json"), """[{"file":"a","journal":"j"},{"journal":"j"}]""".getBytes)
    val e = intercept[IllegalStateException](s.forgotten())
    assert(e.getMessage.contains("x.json") && e.getMessage.contains("not a record of forgotten source states"))
  }
}

/** The local file system, counting its directory listings. */
class ListingCountingFileSystem extends org.apache.hadoop.fs.RawLocalFileSystem {
  override def listStatus(p: org.apache.hadoop.fs.Path): Array[org.apache.hadoop.fs.FileStatus] = {
    ListingCountingFileSystem.listings.incrementAndGet()
    super.listStatus(p)
  }
}

object ListingCountingFileSystem {
  val listings = new java.util.concurrent.atomic.AtomicInteger()
}
