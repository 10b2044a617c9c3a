package io.sparkgazette.spark
package options

import scala.jdk.CollectionConverters._

import io.sparkgazette.spark.errors.GazetteIllegalArgumentException
import io.sparkgazette.spark.testing.SparkThrowables.condition
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.scalatest.funsuite.AnyFunSuite

/** The checks where a DataFrame is loaded, before Spark says whether it is read or written. */
class GazetteOptionsSuite extends AnyFunSuite {
  private val broker = "broker" -> "http://127.0.0.1:8080"

  private def load(kv: (String, String)*): Unit =
    OptionsAtLoad.validate(new CaseInsensitiveStringMap(kv.toMap.asJava))

  private def refused(kv: (String, String)*): GazetteIllegalArgumentException =
    intercept[GazetteIllegalArgumentException](load(kv: _*))

  test("the query's name (Spark 4.3 passes it to sinks) is accepted on both sides, in any case") {
    load(broker, "journal" -> "out/a", "checkpointLocation" -> "/c", "queryName" -> "rollups")
    load(broker, "selector" -> "prefix=in/", "QUERYNAME" -> "rollups")
  }

  test("Spark's own writer options (asynchronous progress tracking) pass on a sink, in Spark's spelling") {
    val async = Seq("asyncProgressTrackingEnabled" -> "false", "asyncProgressTrackingCheckpointIntervalMs" -> "0",
      "_asyncProgressTrackingOverrideSinkSupportCheck" -> "false")
    load(Seq(broker, "journal" -> "out/a", "checkpointLocation" -> "/c") ++ async: _*)
    // A selector is either side's: Spark's writer options make the options a write's.
    load(Seq(broker, "selector" -> "prefix=out/") ++ async: _*)
  }

  test("Spark's writer options pass in other capitals too: a load under Spark Connect gets its names in lower case") {
    load(broker, "journal" -> "out/a", "asyncprogresstrackingenabled" -> "false")
  }

  test("a misspelled option of Spark's or the connector's is refused, naming the one it is likely to be") {
    val spark = refused(broker, "journal" -> "out/a", "asyncProgressTrackingEnable" -> "false")
    assert(condition(spark) == "GAZETTE_UNKNOWN_OPTION")
    assert(spark.getMessageParameters.get("suggestion") == "asyncProgressTrackingEnabled", spark.getMessage)
    val own = refused(broker, "journal" -> "out/a", "checkpointLocaton" -> "/c")
    assert(own.getMessageParameters.get("suggestion") == "checkpointLocation", own.getMessage)
    assert(!own.getMessageParameters.get("knownOptions").contains("asyncProgressTrackingEnabled"))
  }

  test("a writer's option of Spark's is no option of a source, which Spark never reads it from") {
    val read = refused(broker, "journals" -> "in/a", "startingOffsets" -> "earliest",
      "asyncProgressTrackingEnabled" -> "false")
    assert(condition(read) == "GAZETTE_UNKNOWN_OPTION" &&
      read.getMessageParameters.get("option") == "asyncProgressTrackingEnabled")
  }

  test("a save(journal) path is the sink's journal; a source has no path, and paths are no option") {
    load(broker, "path" -> "out/a")
    val path = refused(broker, "journals" -> "in/a", "path" -> "in/b")
    assert(condition(path) == "GAZETTE_UNKNOWN_OPTION" && path.getMessageParameters.get("option") == "path")
    val paths = refused(broker, "selector" -> "prefix=in/", "paths" -> """["in/b"]""")
    assert(condition(paths) == "GAZETTE_UNKNOWN_OPTION" && paths.getMessageParameters.get("option") == "paths")
  }

  test("options naming no journals say what a read and a write each take, after unknown names") {
    val none = refused(broker)
    assert(condition(none) == "GAZETTE_MISSING_OPTION")
    assert(none.getMessage.contains("'selector' or 'journals' to read, or 'journal' (or save(journal)) or 'selector'"))
    assert(condition(refused(broker, "brokr" -> "x")) == "GAZETTE_UNKNOWN_OPTION")
  }

  test("a source's own option makes the options a read's, a sink's own option a write's") {
    val read = refused(broker, "journals" -> "in/a", "startingOffsets" -> "first")
    assert(read.getMessageParameters.get("option") == "startingOffsets")
    val write = refused(broker, "journal" -> "out/a", "mapping" -> "hash")
    assert(write.getMessageParameters.get("option") == "mapping")
  }

  test("test hooks pass under their prefix, in any case, and only there") {
    load(broker, "journal" -> "out/a", "TEST.SINKFAULT" -> "driver-after-persist:1")
    assert(condition(refused(broker, "journal" -> "out/a", "testFault" -> "driver-after-persist:1")) ==
      "GAZETTE_UNKNOWN_OPTION")
  }
}
