package io.sparkgazette.spark
package sink

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.hadoop.SerializableConfiguration
import io.sparkgazette.spark.reflection.ActiveQuery
import io.sparkgazette.spark.sink.config.{SinkColumns, SinkConfig, SinkOptions, SinkTargets}
import io.sparkgazette.spark.sink.intents.{GazetteCommitMessage, SinkProducers}
import io.sparkgazette.spark.sink.metrics.{CommitCounts, SinkCounts, SinkProgress}
import io.sparkgazette.spark.sink.realtime._
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}

/** A stream's write: epochs committed through the driver (see [[SinkDriver]]), or, in real-time
  * mode, rows published as they come (see [[RealTimeDataWriter]]); each epoch's counts go to
  * `progress`. Spark makes one for each batch: what a real-time run keeps from batch to batch is
  * in its [[RealTimeRun]], of `runs`.
  */
private[sink] final class GazetteStreamingWrite(options: SinkOptions, columns: SinkColumns,
    hadoopConf: SerializableConfiguration, queryId: String, progress: SinkProgress, runs: RealTimeRuns)
    extends StreamingWrite {
  private val driver = new SinkDriver(options, columns, hadoopConf, streaming = true, queryId)
  private lazy val realTime = RealTimeQuery.isRealTime(SparkSession.active, queryId)
  private lazy val realTimeRun = runs.of(
    queryId,
    ActiveQuery.runId(SparkSession.active, queryId).getOrElse(
      throw GazetteErrors.internal(s"the run of real-time query $queryId cannot be told on this Spark"))
  )

  override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory =
    GazetteErrors.brokerCalls(writerFactory(info))

  private def writerFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory = {
    val spark = SparkSession.active
    // Spark marks continuous queries only once they run, after building their write.
    if ("true" == spark.sparkContext.getLocalProperty("__is_continuous_processing"))
      throw GazetteErrors.continuousProcessing()
    if (realTime) {
      if (options.exactlyOnce && columns.origin < 0) throw GazetteErrors.realTimeOriginNeeded()
      if (options.exactlyOnce && options.mapping.contains("random")) throw GazetteErrors.realTimeRandomMapping()
      val batch = RealTimeQuery.currentBatch(spark)
        .getOrElse(throw GazetteErrors.internal("a real-time batch without a batch id"))
      val run = realTimeRun
      // Only a run's first batch can be one a micro-batch run committed before it.
      if (run.begin() && driver.recorded(batch)) {
        // A micro-batch run committed this epoch and stopped before Spark recorded it; Spark has
        // dropped its offsets to run the batch again in real-time mode, from the same start to
        // another end. Its ACKs are completed, and the range is written again: at least once.
        progress.committed(driver.commit(batch, Array.empty).total)
        driver.retire(batch)
        GazetteStreamingWrite.log.warn(s"batch $batch was committed by a micro-batch run that stopped before Spark " +
          "recorded it; its rows are written again in real-time mode (at least once for this batch)")
      }
      val listed = run.targets(() => driver.targets())
      // Exactly once, rows without a key are placed by their origin, as a batch run again places them.
      val placed =
        if (options.exactlyOnce && options.mapping.isEmpty && columns.key < 0) listed.copy(mapping = "rendezvous")
        else listed
      val (seed, targets) = new RealTimeBatches(options.checkpointLocation, hadoopConf.value).start(batch, placed,
        driver.existing, run.seed)
      run.seed = Some(seed)
      val (producers, clockFloor) = run.own(seed)
      new RealTimeWriterFactory(run.config(driver.config), targets, seed, producers, clockFloor)
    } else
      new GazetteDataWriterFactory(driver.config, driver.targets(), batchEpoch = -1, driver.epochProducers(),
        driver.threshold(info.numPartitions()), driver.newWriteId())
  }

  // A real-time task's rows are published as they come, under UUIDs a run again repeats: there is
  // nothing for a coordinator to choose between, and asking it costs each task a call to the driver
  // while no task reads.
  override def useCommitCoordinator(): Boolean = !realTime

  override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
    if (realTime) {
      val committed = messages.toSeq.collect { case m: GazetteCommitMessage => m }
      realTimeRun.committed(committed)
      realTimeRun.listAhead(() => GazetteErrors.brokerCalls(driver.targets()))
      new RealTimeBatches(options.checkpointLocation, hadoopConf.value)
        .committed(epochId, retried = committed.exists(!_.firstAttempt))
      progress.committed(CommitCounts.of(committed.map(_.counts), SinkCounts.Zero).total)
    } else progress.committed(GazetteErrors.brokerCalls(driver.commit(epochId, messages)).total)

  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
    if (!realTime) GazetteErrors.brokerCalls(driver.abort(epochId, messages))
}

/** Creates a [[RealTimeDataWriter]] per task attempt of a real-time batch. */
private[sink] final class RealTimeWriterFactory(config: SinkConfig, targets: SinkTargets, seed: Long,
    producers: SinkProducers, clockFloor: Long)
    extends StreamingDataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] = {
    val task = Option(org.apache.spark.TaskContext.get())
    new RealTimeDataWriter(config, targets, partitionId, epochId, seed, producers, clockFloor,
      task.fold(0)(_.stageAttemptNumber()), task.fold(0)(_.attemptNumber()))
  }
}

private object GazetteStreamingWrite {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[GazetteStreamingWrite])
}
