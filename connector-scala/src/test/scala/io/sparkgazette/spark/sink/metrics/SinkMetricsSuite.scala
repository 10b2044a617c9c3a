package io.sparkgazette.spark
package sink
package metrics

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.scalatest.funsuite.AnyFunSuite

/** What the sink's metrics count and report: a writer's counts before and after Spark's last look
  * at its task, an epoch's commit, and a stream's progress.
  */
class SinkMetricsSuite extends AnyFunSuite {
  private def nonZero(c: SinkCounts): Map[String, Long] = c.toMap.filter(_._2 != 0)

  private def values(reported: Array[CustomTaskMetric]): Map[String, Long] =
    reported.map(m => m.name() -> m.value()).toMap

  test("each metric Spark makes from its class name has the name and description the sink declares") {
    val made =
      SinkMetrics.supported.map(m => m.getClass.getDeclaredConstructor().newInstance().asInstanceOf[CustomMetric])
    assert(made.map(_.name()).toSeq == SinkMetrics.Names)
    made.foreach(m => assert(m.description() == SinkMetrics.describe(m.name()) && m.description().nonEmpty))
    assert(SinkMetrics.Names.distinct == SinkMetrics.Names)
    assert(made.find(_.name() == SinkMetrics.BytesAppended).get.aggregateTaskMetrics(Array(3L, 4L)) == "7")
  }

  test("a task reports only the metrics it counted") {
    val reported = SinkMetrics.task(SinkCounts.of(SinkMetrics.RowsWritten -> 5, SinkMetrics.BytesStaged -> 9))
    assert(values(reported) ==
      Map(SinkMetrics.RowsWritten -> 5L, SinkMetrics.BytesStaged -> 9L))
  }

  test("counts add and subtract by metric, and a name the sink does not count is an internal error") {
    val a = SinkCounts.of(SinkMetrics.RowsWritten -> 5, SinkMetrics.Appends -> 1)
    val b = SinkCounts.of(SinkMetrics.RowsWritten -> 2, SinkMetrics.CommitMs -> 7)
    assert(nonZero(a + b) ==
      Map(SinkMetrics.RowsWritten -> 7L, SinkMetrics.Appends -> 1L, SinkMetrics.CommitMs -> 7L))
    assert((a - b)(SinkMetrics.RowsWritten) == 3L)
    assert(SinkCounts.sum(Seq(a, b, a)) == a + b + a && SinkCounts.sum(Nil) == SinkCounts.Zero)
    val e = intercept[IllegalStateException](SinkCounts.of("rowsWriten" -> 1))
    assert(e.getMessage.contains("no sink metric rowsWriten"), e.getMessage)
  }

  test("what a writer appends after Spark's last look at its task goes to the driver in its commit") {
    val w = new WriterCounts
    w.rows = 10
    w.appended(100, 2500000L) // 2.5 ms
    assert(values(w.report()) == Map(SinkMetrics.RowsWritten -> 10L,
      SinkMetrics.BytesAppended -> 100L, SinkMetrics.Appends -> 1L, SinkMetrics.AppendWaitMs -> 2L))
    w.rows += 5
    w.appended(300, 1000000L)
    w.bytesStaged = 40
    val committed = w.commit()
    assert(nonZero(committed.total) == Map(SinkMetrics.RowsWritten -> 15L,
      SinkMetrics.BytesAppended -> 400L, SinkMetrics.Appends -> 2L, SinkMetrics.AppendWaitMs -> 3L,
      SinkMetrics.BytesStaged -> 40L))
    assert(nonZero(committed.unreported) == Map(SinkMetrics.RowsWritten -> 5L,
      SinkMetrics.BytesAppended -> 300L, SinkMetrics.Appends -> 1L, SinkMetrics.AppendWaitMs -> 1L,
      SinkMetrics.BytesStaged -> 40L))
    // Spark looking again after the commit sees what it saw before: the rest is the driver's to report.
    assert(values(w.report())(SinkMetrics.RowsWritten) == 10L)
  }

  test("an epoch's commit counts its tasks and the driver's own work; what Spark did not see, apart") {
    val t1 = TaskCounts(SinkCounts.of(SinkMetrics.RowsWritten -> 10), SinkCounts.of(SinkMetrics.RowsWritten -> 4))
    val t2 = TaskCounts(SinkCounts.of(SinkMetrics.RowsWritten -> 6), SinkCounts.Zero)
    val driver = SinkCounts.of(SinkMetrics.AckIntentsWritten -> 2, SinkMetrics.CommitMs -> 30)
    val c = CommitCounts.of(Seq(t1, t2), driver)
    assert(nonZero(c.total) ==
      Map(SinkMetrics.RowsWritten -> 16L, SinkMetrics.AckIntentsWritten -> 2L, SinkMetrics.CommitMs -> 30L))
    assert(nonZero(c.unreported) ==
      Map(SinkMetrics.RowsWritten -> 4L, SinkMetrics.AckIntentsWritten -> 2L, SinkMetrics.CommitMs -> 30L))
  }

  test("a stream's progress reports every metric, summed over the epochs committed since it last asked") {
    val p = new SinkProgress
    p.committed(SinkCounts.of(SinkMetrics.RowsWritten -> 3))
    p.committed(SinkCounts.of(SinkMetrics.RowsWritten -> 4, SinkMetrics.Appends -> 1))
    val first = p.take().asScala.toSeq
    assert(first.map(_._1) == SinkMetrics.Names)
    assert(first.toMap.filter(_._2 != "0") == Map(SinkMetrics.RowsWritten -> "7", SinkMetrics.Appends -> "1"))
    assert(p.take().asScala.values.toSet == Set("0"), "a trigger that wrote nothing reports zeros")
  }
}
