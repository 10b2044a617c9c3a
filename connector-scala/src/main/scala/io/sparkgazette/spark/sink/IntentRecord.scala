package io.sparkgazette.spark
package sink

import java.nio.file.{FileAlreadyExistsException, Files}
import java.util.{Base64, UUID}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.sparkgazette.message.{AckIntent, ProducerId}
import io.sparkgazette.spark.sink.staging._
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, LocalFileSystem, Path, RawLocalFileSystem}

/** What is recorded for one write: its ACK intents, its staged runs and, for a stream, where its
  * producers stand once they are appended.
  */
private[spark] final case class IntentRecord(intents: Seq[AckIntent], producers: Option[SinkProducers] = None,
    staged: Seq[StagedRun] = Nil)
