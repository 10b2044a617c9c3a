package io.sparkgazette.spark
package handoff

import scala.jdk.CollectionConverters._

import io.sparkgazette.testing.SparkSuite
import org.apache.spark.TaskContext
import org.scalatest.funsuite.AnyFunSuite

/** What a real-time task's source tells its writer, in real Spark tasks: each task sees the
  * journals it reads itself, by which source, until it completes.
  */
class RealTimeReadsSuite extends AnyFunSuite with SparkSuite {
  import RealTimeReadsSuite.describe

  test("a task sees the journals it reads, by source; one two sources read is neither's; other tasks' are not its") {
    val gone = spark.sparkContext.collectionAccumulator[String]("gone")
    val seen = spark.sparkContext.parallelize(Seq(0, 1), 2).mapPartitionsWithIndex { (i, _) =>
      // Listeners run in the reverse order of their registration: this one after the hand-off's own.
      TaskContext.get().addTaskCompletionListener[Unit](_ => gone.add(s"$i: ${RealTimeReads.of(s"own/$i")}"))
      val first, second = new SequencedMessages(capacity = 4)
      RealTimeReads.register("sources/0", Seq(s"own/$i", "shared"), committed = true, first)
      RealTimeReads.register("sources/1", Seq("shared"), committed = i == 0, second)
      RealTimeReads.register("sources/0", Seq(s"own/$i"), committed = true, first) // the same source again
      Iterator(
        Seq(
          describe(RealTimeReads.of(s"own/$i"), first),
          describe(RealTimeReads.of("shared"), first),
          describe(RealTimeReads.of(s"own/${1 - i}"), first)
        ).mkString("; "))
    }.collect().toSeq
    assert(seen == Seq(
      "sources/0, committed true, own window true; two sources, committed true, own window false; none",
      "sources/0, committed true, own window true; two sources, committed false, own window false; none"
    ))
    assert(gone.value.asScala.toSet == Set("0: None", "1: None"), "a completed task's reads stayed")
  }

  test("outside a task nothing is recorded and nothing is read") {
    RealTimeReads.register("sources/0", Seq("driver"), committed = true, new SequencedMessages(capacity = 4))
    assert(RealTimeReads.of("driver").isEmpty)
  }
}

private object RealTimeReadsSuite {

  /** What a task sees of a journal, in words (a task's closure holds no suite). */
  def describe(read: Option[RealTimeReads.Read], emitted: SequencedMessages): String =
    read.fold("none")(r =>
      s"${r.source.getOrElse("two sources")}, committed ${r.committed}, own window ${r.sequenced eq emitted}")
}
