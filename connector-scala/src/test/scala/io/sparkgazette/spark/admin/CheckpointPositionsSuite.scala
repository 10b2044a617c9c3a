package io.sparkgazette.spark
package admin

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/** Reading a query's positions from Spark's offset and commit logs, on files laid out as Spark
  * writes them; the lag tool's suite runs real queries for their checkpoints.
  */
class CheckpointPositionsSuite extends AnyFunSuite {
  private val metadata = """{"batchWatermarkMs":0,"batchTimestampMs":1767225600000,"conf":{}}"""
  private val ours = """{"a/b":{"offset":1024,"revision":17,"origin":0}}"""

  test("an offset log file of either version gives each source's offset, none where Spark wrote '-'") {
    assert(SparkCheckpoint.parseOffsetLog(s"v1\n$metadata\n$ours\n-\n7") ==
      Right(Seq("0" -> Some(ours), "1" -> None, "2" -> Some("7"))))
    assert(SparkCheckpoint.parseOffsetLog(s"v2\n$metadata\n0:$ours\nevents:-") ==
      Right(Seq("0" -> Some(ours), "events" -> None)))
    assert(SparkCheckpoint.parseOffsetLog(s"v2\n$metadata\n7").left.exists(_.contains("without a source id: 7")))
    assert(SparkCheckpoint.parseOffsetLog(s"v9\n$metadata\n$ours").left.exists(_.contains("version v9")))
    assert(SparkCheckpoint.parseOffsetLog("v1").isLeft)
  }

  test("the connector's offsets are told from other sources', which may be JSON objects too") {
    assert(CheckpointPositions.journalOffsets(ours))
    assert(CheckpointPositions.journalOffsets("""{"a/b":{"offset":1,"revision":0,"origin":-1,"producers":[]}}"""))
    Seq("7", """{"logOffset":2}""", """{"topic":{"0":23,"1":5}}""", "{}", "[1]", "not json", """{"a":{"x":1}}""")
      .foreach(other => assert(!CheckpointPositions.journalOffsets(other), other))
  }

  private def checkpoint(files: (String, String)*): SparkCheckpoint = {
    val dir = Files.createTempDirectory("lag")
    files.foreach { case (name, text) =>
      val f = dir.resolve(name)
      Files.createDirectories(f.getParent)
      Files.write(f, text.getBytes("UTF-8"))
    }
    new SparkCheckpoint(dir.toString, new Configuration())
  }

  private def offsets(json: String*) = (s"v1\n$metadata" +: json).mkString("\n")

  test("committed is where the last committed batch ended; planned the batch in progress, if any") {
    val later = """{"a/b":{"offset":2048,"revision":17,"origin":0},"c/d":{"offset":5,"revision":3,"origin":5}}"""
    val p = CheckpointPositions.read(checkpoint(
        "offsets/0" -> offsets(ours, "9"),
        "offsets/1" -> offsets(later, "12"),
        "offsets/.1.crc" -> "x",
        "commits/0" -> "v1\n{}",
        "sources/0/sequencer/initial-offsets.json" -> """{"a/b":{"offset":0}}"""
      ))
    assert(p.committedBatch.contains(0L) && p.plannedBatch.contains(1L))
    assert(p.sources.map(_.source) == Seq("0"), "the rate-like source 1 is not the connector's")
    assert(p.sources.head.committed.map { case (j, pos) => j -> pos.offset } == Map("a/b" -> 1024L))
    assert(p.sources.head.planned.map { case (j, pos) => j -> pos.offset } == Map("a/b" -> 2048L, "c/d" -> 5L))
  }

  test("before any commit, the first batch starts where the query began") {
    val p = CheckpointPositions.read(checkpoint("offsets/0" -> offsets(ours),
        "sources/0/sequencer/initial-offsets.json" -> """{"a/b":{"offset":100,"revision":17,"origin":100}}"""))
    assert(p.committedBatch.isEmpty && p.plannedBatch.contains(0L))
    assert(p.sources.head.committed("a/b").offset == 100L && p.sources.head.planned("a/b").offset == 1024L)
  }

  private def refusal(c: SparkCheckpoint): String = intercept[IllegalArgumentException](CheckpointPositions.read(c))
    .getMessage

  test("a location that is no query's checkpoint reading journals is refused, saying what is there") {
    val missing = new SparkCheckpoint(Files.createTempDirectory("lag").resolve("nope").toString, new Configuration())
    assert(refusal(missing).matches(
        """\[GAZETTE_NOT_A_SOURCE_CHECKPOINT\] Checkpoint location file:/.*/nope does not exist"""))
    val other = refusal(checkpoint("state/0/x" -> "", "metadata" -> "{}"))
    assert(other.contains("has no offsets/ directory (it holds metadata, state/)"), other)
    val empty = checkpoint("offsets/.tmp" -> "", "metadata" -> "{}")
    assert(refusal(empty).contains("has planned no batch yet"))
    val rate = refusal(checkpoint("offsets/0" -> offsets("3"), "commits/0" -> "v1\n{}",
        "gazette-sink/ack-intents/0.json" -> "{}"))
    assert(
      rate.contains("reads no Gazette journals: offsets/0 holds source 0: 3, none of them journal offsets; " +
        "it writes to Gazette (gazette-sink/), which is not read"),
      rate
    )
  }
}
