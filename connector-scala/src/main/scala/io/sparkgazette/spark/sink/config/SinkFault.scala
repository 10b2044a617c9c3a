package io.sparkgazette.spark
package sink
package config

import scala.util.Try

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.options.GazetteOptions

/** A failure the tests inject at a chosen point of the sink's protocol (test-only option
  * `test.sinkFault`, `point:epoch`): `task-after-half` fails the first attempt of partition 0's
  * task once it has appended its first five rows (`task-after-half:1/4`: in epochs 1, 5, 9, ...);
  * `task-lost-after-half` too, but the attempt is lost as if its executor died: its abort rolls
  * back nothing; `task-late-after-half` too, but its appends are held back, as a network might
  * hold them, and land only once epoch + 3 is recorded; `task-appends-again-late` lets the first
  * attempt commit, and its appends land a second time once epoch + 1 is recorded, as the first
  * copy of an append the client retried may; `driver-before-persist`,
  * `driver-after-persist`, `driver-after-some-acks` and `driver-after-publish` fail the driver's commit there.
  * In real-time mode, `task-zombie` makes the first attempt of partition 0's task a zombie: it
  * holds its first rows unappended, fails the task to Spark with the next, and keeps a thread of
  * its own appending the rows it holds, one at a time over a few seconds, each of its own
  * producer's framed only then, while Spark runs the task again (or the batch, in a new run).
  */
private[sink] final case class SinkFault(point: String, epoch: Long, every: Long = 0L) {
  def strikes(point: String, epoch: Long): Boolean =
    this.point == point &&
      (if (every == 0) this.epoch == epoch else epoch >= this.epoch && (epoch - this.epoch) % every == 0)
}

private[sink] object SinkFault {
  val TaskPoints: Set[String] =
    Set("task-after-half", "task-lost-after-half", "task-late-after-half", "task-appends-again-late")

  /** The points of real-time writes. */
  val RealTimePoints: Set[String] = Set("task-zombie")
  private val Points = TaskPoints ++ RealTimePoints ++
    Set("driver-before-persist", "driver-after-persist", "driver-after-some-acks",
      "driver-after-publish")

  private val Every = "([0-9]+)/([1-9][0-9]*)".r

  def parse(value: String): SinkFault = value.split(':') match {
    case Array(point, epoch) if Points.contains(point) && Try(epoch.toLong).isSuccess => SinkFault(point, epoch.toLong)
    case Array(point, Every(first, period)) if TaskPoints.contains(point) || RealTimePoints.contains(point) =>
      SinkFault(point, first.toLong, period.toLong)
    case _ =>
      throw GazetteErrors.invalidOption(GazetteOptions.TestSinkFault, value, "point:epoch, e.g. driver-after-persist:1")
  }
}
