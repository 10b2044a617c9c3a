package io.sparkgazette.spark
package sink
package realtime

import java.security.SecureRandom

import io.sparkgazette.spark.clients.AskedAhead
import io.sparkgazette.spark.sink.config.{SinkConfig, SinkTargets}
import io.sparkgazette.spark.sink.intents.{GazetteCommitMessage, SinkProducers}

/** What the driver keeps from one batch of a run of a real-time query to the next. Spark plans
  * each batch's write anew (a new `Write` and `StreamingWrite` for each batch's execution), so
  * nothing the write holds reaches the next batch; this is held by the query's sink table, which
  * Spark keeps for the run (see [[RealTimeRuns]]).
  *
  * The rows a writer publishes under a producer of its own (no origin, or an at-least-once write)
  * follow [[SinkProducers]]' protocol, with the driver's record kept here in memory: a run that
  * ends takes it along, and the next run draws another `run`, so that a zombie of an earlier run
  * never shares a producer with this one.
  *  - A partition's first attempt publishes as the producer of (run, partition, batch parity,
  *    the partition's generation); any other attempt (Spark's retry of a task lost with its
  *    executor, a speculative copy, a stage retry) as one of its own, used once. A batch whose
  *    partition was committed by another than its first attempt moves that partition to its next
  *    generation, so the first attempt, which may still be appending (a long pause, an executor
  *    cut off: the driver never hears its last clock), shares its producer with no later one.
  *    Batch parity keeps a first attempt still finishing as the next batch starts apart from it.
  *  - A producer's clocks start above the last clock of every first attempt that committed, the
  *    only ones to publish under a producer used before.
  *  - So readers track, per run, two producers per partition, two more per partition and batch
  *    committed by another than its first attempt (its next generation's, one per batch parity),
  *    and one per attempt other than a first: three for each task Spark ran again whose retry
  *    committed.
  *
  * It also keeps what would otherwise cost every batch boundary, while no task reads: the sink's
  * configuration, broadcast once for the run, and the journals, listed as the batch before commits
  * (beside Spark's own logs) rather than as the next one is planned.
  */
private[sink] final class RealTimeRun {

  /** Drawn for the run: producers of other runs differ. */
  val run: Long = RealTimeRun.random.nextLong()
  private var started = false
  private var clockFloor = 0L
  private var generations = Map.empty[Int, Int]

  /** The seed of the query's UUIDs, once a batch of this run has started: looked up once a run. */
  @volatile var seed: Option[Long] = None

  private var config_ = Option.empty[SinkConfig]
  private val listing = new AskedAhead[Unit, SinkTargets]()

  /** The run's configuration: its first batch's `make`. */
  def config(make: => SinkConfig): SinkConfig = synchronized {
    if (config_.isEmpty) config_ = Some(make)
    config_.get
  }

  /** Lists the journals for the next batch, in the background. */
  def listAhead(list: () => SinkTargets): Unit = listing.start(())(list())

  /** The journals listed ahead for this batch, or `list()`'s (see [[AskedAhead]]). */
  def targets(list: () => SinkTargets): SinkTargets = listing.take(())(list())

  /** Whether the batch starting is the run's first. */
  def begin(): Boolean = synchronized {
    val first = !started
    started = true
    first
  }

  /** The producers of the writers' own rows, and the clock they start above. */
  def own(seed: Long): (SinkProducers, Long) = synchronized {
    (SinkProducers(seed ^ run, Map.empty, generations = generations), clockFloor)
  }

  /** After a batch whose tasks committed with `messages`. */
  def committed(messages: Seq[GazetteCommitMessage]): Unit = synchronized {
    clockFloor = (clockFloor +: messages.filter(_.firstAttempt).map(_.lastClock)).max
    messages.filterNot(_.firstAttempt).map(_.partition).distinct.foreach(p =>
      generations += p -> (generations.getOrElse(p, 0) + 1))
  }
}

private object RealTimeRun {
  val random = new SecureRandom()
}

/** The [[RealTimeRun]]s of a sink table, by query and run. Spark gives each start of a query a
  * table of its own, kept for the run (it asks it for the sink's metrics with every trigger), so
  * a run's state goes with the run. Should a table serve another run of its query, that run
  * replaces the last: a query runs once at a time.
  */
private[spark] final class RealTimeRuns {
  private var runs = Map.empty[String, (String, RealTimeRun)]

  def of(queryId: String, runId: String): RealTimeRun = synchronized {
    runs.get(queryId).collect { case (`runId`, r) => r }.getOrElse {
      val r = new RealTimeRun
      runs += queryId -> ((runId, r))
      r
    }
  }
}
