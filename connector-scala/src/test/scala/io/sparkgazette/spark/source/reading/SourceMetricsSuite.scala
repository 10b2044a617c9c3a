package io.sparkgazette.spark
package source
package reading

import org.scalatest.funsuite.AnyFunSuite

class SourceMetricsSuite extends AnyFunSuite {
  test("a task reports its metrics that are not zero, by name") {
    val values = new Array[Long](SourceMetrics.Names.size)
    values(SourceMetrics.Names.indexOf(SourceMetrics.BytesRead)) = 4096
    values(SourceMetrics.Names.indexOf(SourceMetrics.LostBytes)) = 7
    val reported = SourceMetrics.task(values).map(m => m.name() -> m.value()).toMap
    assert(reported == Map(SourceMetrics.BytesRead -> 4096L, SourceMetrics.LostBytes -> 7L))
  }

  test("values that do not match the metrics' names are refused") {
    val e = intercept[IllegalStateException](SourceMetrics.task(new Array[Long](SourceMetrics.Names.size - 1)))
    assert(e.getMessage.contains(s"for ${SourceMetrics.Names.size} metrics"))
  }
}
