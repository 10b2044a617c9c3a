package io.sparkgazette.spark
package options

import scala.jdk.CollectionConverters._

import io.sparkgazette.spark.errors.GazetteIllegalArgumentException
import io.sparkgazette.spark.sink.config.SinkOptions
import io.sparkgazette.spark.source.offsets.SourceOptions
import io.sparkgazette.spark.testing.SparkThrowables.condition
import org.apache.spark.sql.types.{StringType, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.scalatest.funsuite.AnyFunSuite

/** Options checked by the side that takes them, where Spark says which side it is, against their
  * one declaration (options.json).
  */
class GazetteOptionsSuite extends AnyFunSuite {
  private val broker = "broker" -> "http://127.0.0.1:8080"
  private val provider = new GazetteSourceProvider

  /** What Spark calls for a load without a schema, and only there. */
  private def load(kv: (String, String)*): Unit = provider.inferSchema(new CaseInsensitiveStringMap(kv.toMap.asJava))

  /** What Spark calls with a read's schema or a written DataFrame's. */
  private def table(kv: (String, String)*): Unit =
    provider.getTable(new StructType().add("value", StringType), Array.empty, kv.toMap.asJava)

  private def read(kv: (String, String)*): Unit =
    SourceOptions.parse(new CaseInsensitiveStringMap(kv.toMap.asJava), streaming = false)

  private def write(kv: (String, String)*): Unit = SinkOptions.parse(kv.toMap, streaming = false)

  private def refused(f: => Unit): GazetteIllegalArgumentException = intercept[GazetteIllegalArgumentException](f)

  test("a load without a schema is a read: the source checks it, and refuses a sink's option, naming it") {
    load(broker, "journals" -> "in/a")
    val journal = refused(load(broker, "journal" -> "out/a"))
    assert(condition(journal) == "GAZETTE_UNKNOWN_OPTION" && journal.getMessageParameters.get("option") == "journal")
    assert(journal.getMessageParameters.get("suggestion") == "journals", journal.getMessage)
    val mapping = refused(load(broker, "journals" -> "in/a", "mapping" -> "modulo"))
    assert(mapping.getMessageParameters.get("option") == "mapping")
    val none = refused(load(broker))
    assert(condition(none) == "GAZETTE_MISSING_OPTION" && none.getMessage.contains("'selector' or 'journals'"))
  }

  test("a table (a read's schema or a write's) refuses a name no side takes, and leaves values to the sides") {
    table(broker, "journal" -> "out/a", "mapping" -> "hash")
    table(broker, "journals" -> "in/a", "startingOffsets" -> "first")
    table(broker, "path" -> "out/a")
    val typo = refused(table(broker, "journal" -> "out/a", "checkpointLocaton" -> "/c"))
    assert(condition(typo) == "GAZETTE_UNKNOWN_OPTION" &&
        typo.getMessageParameters.get("suggestion") == "checkpointLocation", typo.getMessage)
    assert(refused(table(broker, "selector" -> "prefix=in/", "paths" -> """["in/b"]""")).getMessageParameters
      .get("option") == "paths")
  }

  test("the query's name (Spark 4.3 passes it to sinks) is accepted on both sides, in any case") {
    write(broker, "journal" -> "out/a", "checkpointLocation" -> "/c", "queryName" -> "rollups")
    read(broker, "selector" -> "prefix=in/", "QUERYNAME" -> "rollups")
  }

  test("Spark's own writer options pass on a sink, in Spark's spelling and in lower case (Spark Connect's)") {
    val async = Seq("asyncProgressTrackingEnabled" -> "false", "asyncProgressTrackingCheckpointIntervalMs" -> "0",
      "_asyncProgressTrackingOverrideSinkSupportCheck" -> "false")
    write(Seq(broker, "selector" -> "prefix=out/") ++ async: _*)
    write(broker, "journal" -> "out/a", "asyncprogresstrackingenabled" -> "false")
  }

  test("a misspelled option of Spark's or the connector's is refused, naming the one it is likely to be") {
    val spark = refused(write(broker, "journal" -> "out/a", "asyncProgressTrackingEnable" -> "false"))
    assert(condition(spark) == "GAZETTE_UNKNOWN_OPTION")
    assert(spark.getMessageParameters.get("suggestion") == "asyncProgressTrackingEnabled", spark.getMessage)
    val own = refused(write(broker, "journal" -> "out/a", "checkpointLocaton" -> "/c"))
    assert(own.getMessageParameters.get("suggestion") == "checkpointLocation", own.getMessage)
    assert(!own.getMessageParameters.get("knownOptions").contains("asyncProgressTrackingEnabled"))
  }

  test("a writer's option of Spark's is no option of a source, which Spark never reads it from") {
    val e = refused(load(broker, "journals" -> "in/a", "asyncProgressTrackingEnabled" -> "false"))
    assert(condition(e) == "GAZETTE_UNKNOWN_OPTION" &&
      e.getMessageParameters.get("option") == "asyncProgressTrackingEnabled")
  }

  test("a save(journal) path is the sink's journal; a source has no path") {
    write(broker, "path" -> "out/a")
    val path = refused(load(broker, "journals" -> "in/a", "path" -> "in/b"))
    assert(condition(path) == "GAZETTE_UNKNOWN_OPTION" && path.getMessageParameters.get("option") == "path")
  }

  test("test hooks pass under their prefix, in any case, and only there") {
    write(broker, "journal" -> "out/a", "TEST.SINKFAULT" -> "driver-after-persist:1")
    assert(condition(refused(write(broker, "journal" -> "out/a", "testFault" -> "driver-after-persist:1"))) ==
      "GAZETTE_UNKNOWN_OPTION")
  }

  // The declaration's types, held against the parsers: each side takes a value of the declared
  // type and refuses one that is not, naming the option.
  private val samples: Map[OptionDoc.ValueType, (String, String)] = Map(
    OptionDoc.Bool -> ("true", "maybe"),
    OptionDoc.WholeNumber -> ("1", "many"),
    OptionDoc.Duration -> ("30s", "soon"),
    OptionDoc.Timestamp -> ("0", "yesterday"),
    OptionDoc.Timestamps -> ("""{"in/a": 0}""", "{"),
    OptionDoc.Offsets -> ("latest", "first")
  )

  private val needs: Map[String, Seq[(String, String)]] = Map("maxTriggerDelay" -> Seq("minBytesPerTrigger" -> "1"))

  test("every declared option of a typed value is parsed by its side as its type says") {
    // Spark's parsing options are Spark's to parse; Spark's own options, Spark's to check.
    val typed = OptionDoc.all.filter(d =>
      d.side != OptionDoc.Parsing && d.side != OptionDoc.Spark && samples.contains(d.valueType))
    assert(typed.map(_.valueType).toSet == samples.keySet, "a type without a sample: add one above")
    for (d <- typed) {
      val (good, bad) = samples(d.valueType)
      val sides: Seq[Seq[(String, String)] => Unit] = d.side match {
        case OptionDoc.Source => Seq(kv => read(kv: _*))
        case OptionDoc.Sink => Seq(kv => write(kv: _*))
        case _ => Seq(kv => read(kv: _*), kv => write(kv: _*))
      }
      val target = Map(OptionDoc.Source -> ("journals" -> "in/a"), OptionDoc.Sink -> ("journal" -> "out/a"))
      sides.zipWithIndex.foreach { case (parse, i) =>
        val base = Seq(broker, target(if (d.side == OptionDoc.Sink || i == 1) OptionDoc.Sink else OptionDoc.Source)) ++
          needs.getOrElse(d.name, Nil)
        parse(base :+ (d.name -> good))
        val e = refused(parse(base :+ (d.name -> bad)))
        assert(condition(e) == "GAZETTE_INVALID_OPTION" && e.getMessageParameters.get("option") == d.name,
          s"${d.name} (${d.valueType.key}) '$bad': ${e.getMessage}")
      }
    }
  }

  test("an option both sides take is declared with one type") {
    OptionDoc.all.groupBy(_.name).foreach { case (name, ds) =>
      assert(ds.map(_.valueType).distinct.size == 1, s"$name: ${ds.map(d => d.side.key -> d.valueType.key)}")
    }
  }
}
