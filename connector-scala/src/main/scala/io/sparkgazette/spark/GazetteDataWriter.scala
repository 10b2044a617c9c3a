package io.sparkgazette.spark

import scala.util.control.NonFatal

import io.sparkgazette.client.ClientConfig
import io.sparkgazette.message._
import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory, WriterCommitMessage}
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory
import org.apache.spark.sql.types.{BinaryType, StringType, StructType}
import org.slf4j.LoggerFactory

/** What a task attempt reports when it commits: the ACK intents that make its messages
  * visible (none for at-least-once writes, or for an epoch already recorded).
  */
final case class GazetteCommitMessage(producer: String, intents: Seq[AckIntent], rollbacks: Seq[AckIntent])
    extends WriterCommitMessage

/** Where the input columns are: `value` (or the whole row as JSON), `journal`, `key`. */
final case class SinkColumns(schema: StructType, value: Int, journal: Int, key: Int) {
  def jsonRows: Boolean = value < 0
}

object SinkColumns {

  /** Validates the input schema: `value` string or binary, `journal` string, `key` string or
    * binary; with a `value` column nothing else is allowed. Without one, rows are written as
    * JSON objects of all their columns (ndjson journals only).
    */
  def apply(schema: StructType): SinkColumns = {
    def index(name: String) = schema.fieldNames.indexWhere(_.equalsIgnoreCase(name))
    val (value, journal, key) = (index("value"), index("journal"), index("key"))
    if (value >= 0) {
      schema.fields.zipWithIndex.find { case (_, i) => i != value && i != journal && i != key }.foreach { case (f, _) =>
        throw new IllegalArgumentException(
          s"Column '${f.name}' cannot be written to Gazette alongside 'value': the sink takes 'value' " +
            "(string or binary), and optionally 'journal' (string) and 'key' (string or binary)")
      }
      if (!Set[Any](StringType, BinaryType).contains(schema(value).dataType))
        throw new IllegalArgumentException(s"Column 'value' must be string or binary, not ${schema(value).dataType.simpleString}")
    }
    if (journal >= 0 && schema(journal).dataType != StringType)
      throw new IllegalArgumentException(s"Column 'journal' must be a string, not ${schema(journal).dataType.simpleString}")
    if (key >= 0 && !Set[Any](StringType, BinaryType).contains(schema(key).dataType))
      throw new IllegalArgumentException(s"Column 'key' must be string or binary, not ${schema(key).dataType.simpleString}")
    SinkColumns(schema, value, journal, key)
  }
}

/** The journals an epoch writes to, resolved on the driver, and how rows map to them. */
final case class SinkTargets(journals: IndexedSeq[String], contentTypes: Map[String, String], mapping: String)

/** Everything a writer needs: the sink's options, its input columns, and (exactly-once) the
  * checkpoint location where epochs' ACK intents are recorded.
  */
final case class SinkConfig(options: SinkOptions, columns: SinkColumns, intentLog: Option[String],
    hadoopConf: SerializableConfiguration) {
  def client: ClientConfig = options.clientConfig
}

/** Creates a [[GazetteDataWriter]] per task attempt, for streaming epochs and batch jobs. */
final class GazetteDataWriterFactory(config: SinkConfig, targets: SinkTargets, batchEpoch: Long)
    extends DataWriterFactory with StreamingDataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    createWriter(partitionId, taskId, batchEpoch)

  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] =
    new GazetteDataWriter(config, targets, partitionId, epochId)
}

/** Publishes one task attempt's rows. Exactly-once, they are CONTINUE_TXN messages of a fresh
  * producer, appended per journal in bounded flushes; the attempt's ACK intents go to the
  * driver in its commit message and are appended only once the driver has recorded them.
  * An epoch whose intents are already recorded was committed before a restart: its writers
  * write nothing.
  */
final class GazetteDataWriter(config: SinkConfig, targets: SinkTargets, partitionId: Int, epoch: Long)
    extends DataWriter[InternalRow] {
  import GazetteDataWriter._

  private val client = ClientCache(config.client)
  private val publisher = new Publisher()
  private val cols = config.columns
  private val toJson = if (cols.jsonRows) new RowToJson(cols.schema) else null
  private val framings: Map[String, Framing] = targets.contentTypes.map { case (j, ct) =>
    j -> Framing.forContentType(ct, config.options.uuidPointer, config.options.uuidField)
      .fold(p => throw new IllegalStateException(s"Journal $j cannot be written: $p"), identity)
  }
  private val mapping = if (targets.journals.size > 1) Mapping.named(targets.mapping, targets.journals).toOption.get else null
  private val skip = config.intentLog.exists(dir => new AckIntentLog(dir, config.hadoopConf.value).contains(epoch))
  private val attempt = Option(TaskContext.get()).map(_.attemptNumber()).getOrElse(0)
  private var rows = 0L
  private var wrote = false

  if (skip) log.info(s"epoch $epoch is already committed; partition $partitionId writes nothing")

  override def write(row: InternalRow): Unit = if (!skip) {
    val journal = journalOf(row)
    val framing = framings.getOrElse(journal, throw new IllegalArgumentException(
      s"Row $rows of partition $partitionId names journal '$journal', which is not among the sink's journals ${targets.journals.mkString(", ")}"))
    val payload =
      if (cols.jsonRows) {
        if (framing.contentType != Framing.JsonLines)
          throw new IllegalArgumentException(s"Journal $journal is ${framing.contentType}: rows need a 'value' column")
        toJson(row)
      } else if (row.isNullAt(cols.value))
        throw new IllegalArgumentException(s"Row $rows of partition $partitionId has a null value")
      else row.getBinary(cols.value)
    try {
      if (config.options.exactlyOnce) publisher.publishUncommitted(journal, framing, payload)
      else publisher.publishCommitted(journal, framing, payload)
    } catch {
      case e: MessageFormatException =>
        throw new IllegalArgumentException(s"Row $rows of partition $partitionId cannot be written to $journal: ${e.getMessage}", e)
    }
    rows += 1
    if (publisher.buffered(journal) >= config.options.flushBytes) flush(journal)
    config.options.testFault.filter(f => f.point == "task-after-half" && f.epoch == epoch && attempt == 0 && partitionId == 0)
      .foreach(_ => if (rows == FaultAfterRows) { flushAll(); throw new IllegalStateException(s"injected task failure in epoch $epoch after $rows rows") })
  }

  override def commit(): WriterCommitMessage = {
    if (skip || !config.options.exactlyOnce) { flushAll(); return GazetteCommitMessage(publisher.producer.toString, Nil, Nil) }
    flushAll()
    val rollbacks = publisher.rollbackIntents()
    GazetteCommitMessage(publisher.producer.toString, publisher.buildAckIntents(), rollbacks)
  }

  /** Rolls back what this attempt appended, where possible; a reader would ignore it anyway. */
  override def abort(): Unit = if (config.options.exactlyOnce && wrote) {
    publisher.drain()
    try publisher.buildRollbackIntents().foreach(i => client.append(i.journal, i.intent))
    catch { case NonFatal(e) => log.warn(s"rolling back partition $partitionId of epoch $epoch: $e") }
  }

  override def close(): Unit = ()

  private def journalOf(row: InternalRow): String =
    if (cols.journal >= 0 && !row.isNullAt(cols.journal)) row.getUTF8String(cols.journal).toString
    else if (mapping == null) targets.journals.head
    else mapping.journalFor(if (cols.key >= 0 && !row.isNullAt(cols.key)) row.getBinary(cols.key) else Array.emptyByteArray)

  private def flush(journal: String): Unit = {
    val bytes = publisher.drain(journal)
    if (bytes.nonEmpty) { client.append(journal, bytes); wrote = true }
  }

  private def flushAll(): Unit = targets.journals.foreach(flush)
}

object GazetteDataWriter {
  private val log = LoggerFactory.getLogger(classOf[GazetteDataWriter])

  /** Where an injected task failure strikes: after this many rows, appended. */
  private val FaultAfterRows = 5L
}
