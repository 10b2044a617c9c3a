package io.sparkgazette.spark
package sink
package intents

import java.security.SecureRandom

import io.sparkgazette.message.ProducerId

/** The producers of an exactly-once stream, and where each stands: what the driver records
  * with every epoch, so that readers track as many producers as the query has parallelism, not
  * as many as it has had epochs.
  *
  * The protocol, against Gazette's Sequencer rules:
  *  - A partition's first attempt publishes as the producer of (query run, partition, epoch
  *    parity, the partition's generation); any other attempt (a retry, a speculative copy, a
  *    stage retry's) as one of its own, used once: (query run, partition, stage attempt, task
  *    attempt, epoch). Attempts that can run at once (those, and a killed attempt still
  *    finishing as the next epoch starts) differ in one of these, so no two live attempts share
  *    a producer.
  *  - `lastAcks` holds, per producer and journal, the clock of the last ACK recorded for it.
  *    A producer's clock starts above every one of them, on whatever executor it runs.
  *  - No producer is handed out again once an attempt under it did not commit: that attempt
  *    (failed, killed, lost with its executor, or running on after the copy that committed) may
  *    have left messages open, or have appends on their way that land after a later ACK, and the
  *    producer's next ACK would commit them. Other attempts than a partition's first publish
  *    once; a partition whose epoch was committed by another than its first attempt moves to its
  *    next generation; an epoch that fails ends the run, and a new run of the query (which may
  *    follow a run killed mid-epoch) starts from a new seed.
  *  - So a task appends no rollback ahead of its rows: under a producer used again nothing is
  *    open. A copy of its append landing again after the epoch committed (the first copy of an
  *    append the client retried) then holds only messages at or below the producer's last ACK,
  *    which readers drop; a rollback ACK in it would take them back below that ACK, and the
  *    producer's next ACK would commit the copy again.
  *  - A failed attempt, and the driver for a failed epoch, append ACKs at `rollbackClock`: readers
  *    drop the messages left open rather than hold them.
  *
  * @param seed drawn for each run of a query, so that two runs or queries never share producers
  * @param run the run of the query (Spark's `runId`) these producers belong to
  * @param generations per partition, how many of its epochs a later attempt committed
  */
private[sink] final case class SinkProducers(seed: Long, lastAcks: Map[(ProducerId, String), Long],
    run: String = "", generations: Map[Int, Int] = Map.empty) {

  /** The producer of a task attempt of `epoch`. */
  def producer(partition: Int, stageAttempt: Int, attempt: Int, epoch: Long): ProducerId = {
    var h = seed
    val generation = generations.getOrElse(partition, 0).toLong
    val once = !SinkProducers.isFirst(stageAttempt, attempt)
    for (v <- Seq(partition.toLong, stageAttempt.toLong, attempt.toLong, if (once) epoch else epoch & 1L, generation))
      h = SinkProducers.mix(h ^ v)
    // Gazette's rule for random producers: the multicast bit set, so never a real MAC.
    ProducerId((h & 0xffffffffffffL) | (1L << 40))
  }

  /** The clock `producer` continues from: no message of it may fall at or below an ACK of it. */
  def clockFloor(producer: ProducerId): Long =
    lastAcks.iterator.collect { case ((p, _), c) if p == producer => c }.foldLeft(0L)(math.max)

  /** The clock of the ACK that rolls back what `producer` left open in `journal`. */
  def rollbackClock(producer: ProducerId, journal: String): Long = lastAcks.getOrElse((producer, journal), 1L)

  /** After an epoch whose ACKs (producer, journal, clock) were recorded, and whose partitions
    * `retried` were committed by another than their first attempt.
    */
  def after(acks: Iterable[(ProducerId, String, Long)], retried: Iterable[Int] = Nil): SinkProducers =
    copy(
      lastAcks = lastAcks ++ acks.map { case (p, j, c) => (p, j) -> math.max(c, lastAcks.getOrElse((p, j), 0L)) },
      generations = generations ++ retried.toSeq.distinct.map(p => p -> (generations.getOrElse(p, 0) + 1))
    )

  /** These producers where `run` continues them, or fresh ones for a new run. */
  def forRun(run: String): SinkProducers = if (run == this.run) this else SinkProducers.fresh(run)
}

private[sink] object SinkProducers {
  private val random = new SecureRandom()

  def fresh(run: String): SinkProducers = SinkProducers(random.nextLong(), Map.empty, run)

  /** Whether a task attempt is its partition's first, whose producer serves more than one epoch. */
  def isFirst(stageAttempt: Int, attempt: Int): Boolean = stageAttempt == 0 && attempt == 0

  // SplitMix64's finalizer: every input bit moves every output bit.
  private def mix(x: Long): Long = {
    var z = x + 0x9e3779b97f4a7c15L
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL
    z ^ (z >>> 31)
  }
}
