package io.sparkgazette.spark
package sink

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.runtime.SerializableConfiguration
import io.sparkgazette.spark.sink.config.{SinkColumns, SinkConfig, SinkOptions, SinkTargets}
import io.sparkgazette.spark.sink.intents.GazetteCommitMessage
import io.sparkgazette.spark.sink.metrics.{CommitCounts, SinkCounts, SinkProgress}
import io.sparkgazette.spark.sink.realtime._
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}

/** A stream's write: epochs committed through the driver (see [[SinkDriver]]), or, in real-time
  * mode, rows published as they come (see [[RealTimeDataWriter]]); each epoch's counts go to
  * `progress`.
  */
private[spark] final class GazetteStreamingWrite(options: SinkOptions, columns: SinkColumns,
    hadoopConf: SerializableConfiguration, queryId: String, progress: SinkProgress)
    extends StreamingWrite {
  private val driver = new SinkDriver(options, columns, hadoopConf, streaming = true, queryId)
  private lazy val realTime = RealTimeQuery.isRealTime(SparkSession.active, queryId)
  private lazy val realTimeBatches = new RealTimeBatches(options.checkpointLocation, hadoopConf.value)
  // This run's real-time tasks publish rows without an origin under producers of this run, each
  // batch's clocks above the last's.
  private val run = new java.security.SecureRandom().nextLong()
  @volatile private var ownClock = 0L
  @volatile private var startedRealTime = false

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
      // Only a run's first batch can be one a micro-batch run committed before it.
      if (!startedRealTime && driver.recorded(batch)) {
        // A micro-batch run committed this epoch and stopped before Spark recorded it; Spark has
        // dropped its offsets to run the batch again in real-time mode, from the same start to
        // another end. Its ACKs are completed, and the range is written again: at least once.
        progress.committed(driver.commit(batch, Array.empty).total)
        driver.retire(batch)
        GazetteStreamingWrite.log.warn(s"batch $batch was committed by a micro-batch run that stopped before Spark " +
          "recorded it; its rows are written again in real-time mode (at least once for this batch)")
      }
      val listed = driver.targets()
      // Exactly once, rows without a key are placed by their origin, as a batch run again places them.
      val placed =
        if (options.exactlyOnce && options.mapping.isEmpty && columns.key < 0) listed.copy(mapping = "rendezvous")
        else listed
      val (seed, targets) = realTimeBatches.start(batch, placed)
      startedRealTime = true
      new RealTimeWriterFactory(driver.config, targets, seed, run, ownClock)
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
      ownClock = (ownClock +: committed.map(_.lastClock)).max
      realTimeBatches.committed(epochId)
      progress.committed(CommitCounts.of(committed.map(_.counts), SinkCounts.Zero).total)
    } else progress.committed(GazetteErrors.brokerCalls(driver.commit(epochId, messages)).total)

  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
    if (!realTime) GazetteErrors.brokerCalls(driver.abort(epochId, messages))
}

/** Creates a [[RealTimeDataWriter]] per task of a real-time batch. */
private[spark] final class RealTimeWriterFactory(config: SinkConfig, targets: SinkTargets, seed: Long, run: Long,
    clockFloor: Long)
    extends StreamingDataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] =
    new RealTimeDataWriter(config, targets, partitionId, epochId, seed, run, clockFloor)
}

private object GazetteStreamingWrite {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[GazetteStreamingWrite])
}
