package io.sparkgazette.spark

import java.nio.file.{Files, Path}

import io.sparkgazette.message.{ProducerId, ProducerState, Sequencer}
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/** The state store on the local file system: its format, what it keeps and what it refuses. */
class SequencerStateStoreSuite extends AnyFunSuite {
  private val J = "events/part-000"

  private def store(dir: Path = Files.createTempDirectory("gazette-states"), conf: Configuration = new Configuration()): (SequencerStateStore, Path) = {
    val s = new SequencerStateStore(dir.toString, conf)
    s.initialize()
    (s, dir)
  }

  private val R = 5L // the journal entry's creating revision
  private val O = 0L // and its origin

  private def state(resume: Long, n: Int, revision: Long = R) =
    SequencerState(resume, (0 until n).map(i => ProducerState(J, ProducerId(0x100000L + i), 1000L + i, if (i % 3 == 0) 77L + i else -1L)),
      revision, O)

  test("states round-trip, and the first state saved at an offset is the one kept") {
    val (s, _) = store()
    assert(s.load(J, 10, R, O).isEmpty)
    assert(s.save(J, 10, state(9, 5)) == state(9, 5))
    assert(s.load(J, 10, R, O).contains(state(9, 5)))
    assert(s.save(J, 10, state(10, 2)) == state(9, 5), "a later attempt must agree with the saved state")
    assert(s.load(J, 10, R, O).contains(state(9, 5)))
  }

  test("a state an earlier entry of the journal left is neither loaded nor kept") {
    val (s, _) = store()
    s.save(J, 10, state(9, 3, revision = 4))
    assert(s.load(J, 10, R, O).isEmpty && s.nearest(J, 0, 20, R, O).isEmpty)
    assert(s.save(J, 10, state(10, 1)) == state(10, 1))
    assert(s.load(J, 10, R, O).contains(state(10, 1)))
  }

  test("nearest finds the newest state in range; prune keeps the newest at or below the committed offset") {
    val (s, dir) = store()
    Seq(10L, 20L, 30L, 40L).foreach(o => s.save(J, o, state(o, 1)))
    assert(s.nearest(J, 0, 35, R, O).map(_._1).contains(30L))
    assert(s.nearest(J, 31, 35, R, O).isEmpty)
    val jdir = dir.resolve("journals").resolve(java.net.URLEncoder.encode(J, "UTF-8"))
    val stale = Files.write(jdir.resolve(".10.state.dead.tmp"), Array[Byte](1, 2))
    Files.setLastModifiedTime(stale, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() - 3600000L))
    val fresh = Files.write(jdir.resolve(".40.state.live.tmp"), Array[Byte](1, 2))
    s.prune(J, 35)
    assert(Seq(10L, 20L, 30L, 40L).filter(o => s.load(J, o, R, O).isDefined) == Seq(30L, 40L))
    assert(!Files.exists(stale) && Files.exists(fresh), "only temporary files of long-dead attempts are removed")
    s.prune(J, 35) // a batch that saved nothing at its end still leaves the next one a base
    assert(s.nearest(J, 0, 35, R, O).map(_._1).contains(30L))
    assert(s.journals() == Seq(J))
    s.remove(J)
    assert(s.journals().isEmpty && s.load(J, 40, R, O).isEmpty)
  }

  test("files of another format version, and checkpoints of an older layout, are refused naming the version") {
    // Without Hadoop's checksum files, so that the test can edit a state as another version would write it.
    val raw = new Configuration()
    raw.set("fs.file.impl", classOf[org.apache.hadoop.fs.RawLocalFileSystem].getName)
    raw.setBoolean("fs.file.impl.disable.cache", true)
    val (s, dir) = store(conf = raw)
    s.save(J, 10, state(10, 1))
    val file = dir.resolve("journals").resolve(java.net.URLEncoder.encode(J, "UTF-8")).resolve("10.state")
    val bytes = Files.readAllBytes(file)
    bytes(7) = 99
    Files.write(file, bytes)
    val e = intercept[IllegalStateException](s.load(J, 10, R, O))
    assert(e.getMessage.contains("format version 99") && e.getMessage.contains("format 1"), e.getMessage)

    Files.writeString(dir.resolve("source.json"), """{"format": 7}""")
    assert(intercept[IllegalStateException](store(dir)).getMessage.contains("format version 7"))
    val legacy = Files.createTempDirectory("gazette-states")
    Files.createDirectories(legacy.resolve("events%2Fpart-000"))
    assert(intercept[IllegalStateException](store(legacy)).getMessage.contains("not in a format this connector reads"))
  }

  test("a million producers in one journal's state: at most 64 MiB, saved and loaded in about a second") {
    val (s, dir) = store()
    val big = state(1L << 30, 1000000)
    val t0 = System.nanoTime()
    s.save(J, 100, big)
    val t1 = System.nanoTime()
    val loaded = s.load(J, 100, R, O).get
    val t2 = System.nanoTime()
    val seq = new Sequencer[Array[Byte]](Map(J -> loaded.resume), loaded.producers)
    val t3 = System.nanoTime()
    val (_, again) = seq.checkpoint(0)
    val t4 = System.nanoTime()
    assert(loaded == big && again.size == big.producers.size)
    val file = dir.resolve("journals").resolve(java.net.URLEncoder.encode(J, "UTF-8")).resolve("100.state")
    val size = Files.size(file)
    assert(size <= (64L << 20), s"$size bytes")
    info(f"state of 1,000,000 producers: ${size / 1048576.0}%.1f MiB; save ${(t1 - t0) / 1e6}%.0f ms, load " +
      f"${(t2 - t1) / 1e6}%.0f ms, Sequencer restored ${(t3 - t2) / 1e6}%.0f ms, checkpointed ${(t4 - t3) / 1e6}%.0f ms")
  }
}
