package io.sparkgazette.spark
package sink

import scala.util.control.NonFatal

import com.google.protobuf.ByteString
import io.sparkgazette.client.ClientConfig
import io.sparkgazette.message._
import io.sparkgazette.spark.sink.staging._
import org.apache.spark.TaskContext
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory, WriterCommitMessage}
import org.apache.spark.sql.types.{BinaryType, StringType, StructType}
import org.slf4j.LoggerFactory

/** What a task attempt reports when it commits: the ACK intents that make its messages
  * visible (none for at-least-once writes, or for an epoch already recorded), and how many
  * rows it held back from journals the sink cannot write, for the driver to refuse.
  */
private[spark] final case class GazetteCommitMessage(producer: String, intents: Seq[AckIntent],
    rollbacks: Seq[AckIntent],
    unwritable: Map[String, Long] = Map.empty, staged: Seq[StagedRun] = Nil)
    extends WriterCommitMessage
