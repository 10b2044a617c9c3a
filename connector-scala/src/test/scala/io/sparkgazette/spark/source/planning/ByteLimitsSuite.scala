package io.sparkgazette.spark
package source
package planning

import org.apache.spark.sql.connector.read.streaming.ReadLimit
import org.scalatest.funsuite.AnyFunSuite

class ByteLimitsSuite extends AnyFunSuite {
  test("byte limits come back from the read limit Spark hands back, whichever are set") {
    for (max <- Seq(None, Some(1L << 20)); min <- Seq(None, Some(4096L))) {
      val limits = ByteLimits(max, min, if (min.isDefined) 30000L else 0L)
      assert(ByteLimits.of(limits.readLimit) == limits)
    }
    assert(ByteLimits(None, None, 0L).readLimit == ReadLimit.allAvailable())
  }
}
