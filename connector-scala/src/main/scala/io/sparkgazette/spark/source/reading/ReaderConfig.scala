package io.sparkgazette.spark
package source
package reading

import java.util.concurrent.ConcurrentHashMap

import io.sparkgazette.client.ClientConfig
import io.sparkgazette.message.{Framing, JsonFraming}
import io.sparkgazette.spark.hadoop.SerializableConfiguration
import io.sparkgazette.spark.source.offsets.SourceOptions
import io.sparkgazette.spark.source.progress.NewestClock
import io.sparkgazette.spark.source.rows.{MessageToRow, RowShape}
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.SparkSession

/** What every reader of a scan needs besides its ranges: the source's options, for streaming
  * queries the directory where sequencer states cross batches, and the rows the query reads
  * (columns it does not read are never built), and for streaming queries the accumulator of the
  * newest message emitted.
  */
private[source] final case class ReaderConfig(options: SourceOptions, stateDir: Option[String],
    hadoopConfBroadcast: Broadcast[SerializableConfiguration], shape: RowShape, newest: Option[NewestClock]) {
  def hadoopConf: SerializableConfiguration = hadoopConfBroadcast.value

  /** The connector's columns the query reads. */
  def columns: Seq[String] = shape.columns

  // Once per task rather than per range: a task of a thousand small ranges builds each once.
  @transient lazy val client: ClientConfig = options.clientConfig
  @transient private lazy val framings = new ConcurrentHashMap[String, Either[String, Framing]]()

  /** What of a journal's labels its ranges carry: all of them when the query reads the
    * `labels` column, none otherwise (a task of many journals would ship them for nothing).
    */
  def labelsToShip(labels: Map[String, Seq[String]]): Map[String, Seq[String]] =
    if (readsLabels) labels else Map.empty

  def readsLabels: Boolean = columns.contains(MessageToRow.Labels)

  /** The framing of a journal's content type (framings keep no state between reads). A typed
    * read of ndjson has its framing say where each message's members lie, for the parser to read
    * only those the query selects.
    */
  def framing(contentType: String): Either[String, Framing] =
    framings.computeIfAbsent(
      contentType,
      {
        case Framing.JsonLines if shape.typed.isDefined =>
          Right(new JsonFraming(options.uuidPointer, withMembers = true))
        case t => Framing.forContentType(t, options.uuidPointer, options.uuidField)
      }
    )
}

private[source] object ReaderConfig {
  // Broadcast, so that an executor deserializes the session's Hadoop configuration once rather
  // than with every task (over a third of deserializing a small stream's task, by a profile).
  def apply(options: SourceOptions, stateDir: Option[String], hadoopConf: SerializableConfiguration,
      shape: RowShape, newest: Option[NewestClock] = None): ReaderConfig =
    ReaderConfig(options, stateDir, SparkSession.active.sparkContext.broadcast(hadoopConf), shape, newest)
}
