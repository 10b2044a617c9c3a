package io.sparkgazette.spark

import scala.util.control.NonFatal

import io.sparkgazette.client.{ClientConfig, GazetteClient}
import io.sparkgazette.message.AckIntent
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend
import org.slf4j.LoggerFactory

/** Builds the sink's write: append (and update, read as append); complete mode is refused. */
final class GazetteWriteBuilder(info: LogicalWriteInfo)
    extends WriteBuilder with SupportsTruncate with SupportsStreamingUpdateAsAppend {
  private var truncating = false

  override def truncate(): WriteBuilder = { truncating = true; this }

  override def build(): Write = {
    if (truncating)
      throw new UnsupportedOperationException(
        "Gazette journals are append-only: complete output mode (and overwrite) cannot replace what was written. " +
          "Use append or update output mode.")
    new GazetteWrite(info)
  }
}

/** The sink's protocol, shared by streaming epochs and batch jobs. */
final class GazetteWrite(info: LogicalWriteInfo) extends Write {
  private val options = scala.jdk.CollectionConverters.MapHasAsScala(info.options().asCaseSensitiveMap()).asScala.toMap
  private val columns = SinkColumns(info.schema())
  private def hadoopConf = new SerializableConfiguration(SparkSession.active.sparkContext.hadoopConfiguration)

  override def toStreaming: StreamingWrite = new GazetteStreamingWrite(GazetteOptions.sink(options, streaming = true), columns, hadoopConf)

  override def toBatch: BatchWrite = new GazetteBatchWrite(GazetteOptions.sink(options, streaming = false), columns, hadoopConf)

  override def description(): String = "Gazette"
}

/** The driver's half of the protocol: resolve targets, record intents, append ACKs. */
private[spark] class SinkDriver(options: SinkOptions, columns: SinkColumns, hadoopConf: SerializableConfiguration) {
  import SinkDriver._

  private lazy val client = new GazetteClient(options.clientConfig)
  private val log_ = options.checkpointLocation.filter(_ => options.exactlyOnce).map(new AckIntentLog(_, hadoopConf.value))

  val config: SinkConfig = SinkConfig(options, columns, log_.map(_ => options.checkpointLocation.get), hadoopConf)

  /** The journals of this epoch: the selector is listed again each time. */
  def targets(): SinkTargets = {
    val journals = options.target match {
      case WriteTarget.OneJournal(j) =>
        client.list(s"name=$j").map(_.getSpec).headOption
          .getOrElse(throw new IllegalArgumentException(s"Journal '$j' (option 'journal') does not exist")) :: Nil
      case WriteTarget.BySelector(s) =>
        val specs = client.list(s).map(_.getSpec)
        if (specs.isEmpty) throw GazetteErrors.noJournals(s"selector '$s'")
        specs
    }
    val contentTypes = journals.map(s => s.name -> s.labels.toSeq.flatMap(_.labels).find(_.name == "content-type").map(_.value).getOrElse("")).toMap
    val mapping = options.mapping.getOrElse(if (columns.key >= 0) "rendezvous" else "random")
    SinkTargets(journals.map(_.name).sorted.toIndexedSeq, contentTypes, mapping)
  }

  /** Records the epoch's intents (unless a previous run did), then appends them, all of a
    * journal's ACKs in one append.
    */
  def commit(epoch: Long, messages: Array[WriterCommitMessage]): Unit = {
    val intents = log_ match {
      case None => collect(messages)
      case Some(l) =>
        l.read(epoch).getOrElse {
          val fresh = collect(messages)
          fault("driver-before-persist", epoch)
          l.write(epoch, fresh)
          fresh
        }
    }
    fault("driver-after-persist", epoch)
    intents.groupBy(_.journal).toSeq.sortBy(_._1).zipWithIndex.foreach { case ((journal, acks), i) =>
      client.append(journal, acks.map(_.intent).reduce(_ ++ _))
      if (i == 0) fault("driver-after-some-acks", epoch)
    }
    log_.foreach(_.prune(epoch))
    logger.info(s"epoch $epoch committed: ${intents.size} ACK intents over ${intents.map(_.journal).distinct.size} journals")
  }

  /** An epoch that failed before its intents were recorded is rolled back; one recorded is
    * committed and completes when the query restarts.
    */
  def abort(epoch: Long, messages: Array[WriterCommitMessage]): Unit =
    if (log_.exists(_.contains(epoch))) logger.warn(s"epoch $epoch failed after its ACK intents were recorded; a restart completes it")
    else
      messages.collect { case m: GazetteCommitMessage => m.rollbacks }.flatten.groupBy(_.journal).foreach { case (journal, rs) =>
        try client.append(journal, rs.map(_.intent).reduce(_ ++ _))
        catch { case NonFatal(e) => logger.warn(s"rolling back epoch $epoch in $journal: $e") }
      }

  def close(): Unit = client.close()

  private def collect(messages: Array[WriterCommitMessage]): Seq[AckIntent] =
    messages.toSeq.collect { case m: GazetteCommitMessage => m.intents }.flatten

  private def fault(point: String, epoch: Long): Unit =
    options.testFault.filter(f => f.point == point && f.epoch == epoch).foreach { _ =>
      throw new IllegalStateException(s"injected driver failure at $point of epoch $epoch")
    }
}

object SinkDriver {
  private val logger = LoggerFactory.getLogger(classOf[SinkDriver])
}

final class GazetteStreamingWrite(options: SinkOptions, columns: SinkColumns, hadoopConf: SerializableConfiguration)
    extends StreamingWrite {
  private val driver = new SinkDriver(options, columns, hadoopConf)

  override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory =
    new GazetteDataWriterFactory(driver.config, driver.targets(), batchEpoch = -1)

  override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit = driver.commit(epochId, messages)

  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit = driver.abort(epochId, messages)
}

/** A batch write is one epoch. With `checkpointLocation` its intents are recorded there first,
  * as in streaming, so a job restarted with the same location and epoch cannot write twice;
  * without it the job commit appends them directly: the job commit is then the only writer of
  * those ACKs, and a failure before it leaves every message unacknowledged.
  */
final class GazetteBatchWrite(options: SinkOptions, columns: SinkColumns, hadoopConf: SerializableConfiguration)
    extends BatchWrite {
  private val driver = new SinkDriver(options, columns, hadoopConf)
  private val epoch = 0L

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    new GazetteDataWriterFactory(driver.config, driver.targets(), batchEpoch = epoch)

  override def commit(messages: Array[WriterCommitMessage]): Unit = driver.commit(epoch, messages)

  override def abort(messages: Array[WriterCommitMessage]): Unit = driver.abort(epoch, messages)
}
