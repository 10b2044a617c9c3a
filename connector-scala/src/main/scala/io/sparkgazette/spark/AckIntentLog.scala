package io.sparkgazette.spark

import java.util.{Base64, UUID}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import io.sparkgazette.message.AckIntent
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

/** The sink's durable record of each epoch's ACK intents, under the query's checkpoint
  * location: `<checkpointLocation>/gazette-sink/ack-intents/<epoch>.json`, written by rename so
  * that an epoch's intents are all there or not at all.
  *
  * An epoch whose intents are recorded is committed, whatever happened next: its ACKs are
  * (re-)appended until they land, and its writers, if Spark runs the epoch again, write nothing.
  */
final class AckIntentLog(checkpointLocation: String, conf: Configuration) {
  private val dir = new Path(new Path(checkpointLocation, "gazette-sink"), "ack-intents")
  private lazy val fs: FileSystem = dir.getFileSystem(conf)
  private val mapper = new ObjectMapper()

  def contains(epoch: Long): Boolean = fs.exists(file(epoch))

  def read(epoch: Long): Option[Seq[AckIntent]] =
    if (!contains(epoch)) None
    else {
      val in = fs.open(file(epoch))
      try Some(mapper.readTree(in).get("intents").elements().asScala.map { n =>
        AckIntent(n.get("journal").asText(), Base64.getDecoder.decode(n.get("intent").asText()))
      }.toSeq)
      finally in.close()
    }

  def write(epoch: Long, intents: Seq[AckIntent]): Unit = {
    val node = mapper.createObjectNode()
    node.put("epoch", epoch)
    val array = node.putArray("intents")
    intents.foreach(i => array.addObject().put("journal", i.journal).put("intent", Base64.getEncoder.encodeToString(i.intent)))
    fs.mkdirs(dir)
    val tmp = new Path(dir, s".$epoch.${UUID.randomUUID()}.tmp")
    val out = fs.create(tmp, true)
    try out.write(mapper.writeValueAsBytes(node))
    finally out.close()
    if (!fs.rename(tmp, file(epoch))) {
      fs.delete(tmp, false)
      throw new IllegalStateException(s"cannot record the ACK intents of epoch $epoch at ${file(epoch)}: it exists")
    }
  }

  /** Forgets epochs more than `keep` before `epoch`: Spark never re-runs them. */
  def prune(epoch: Long, keep: Int = 100): Unit =
    if (fs.exists(dir))
      fs.listStatus(dir).map(_.getPath).foreach { p =>
        p.getName.stripSuffix(".json").toLongOption.filter(_ < epoch - keep).foreach(_ => fs.delete(p, false))
      }

  private def file(epoch: Long) = new Path(dir, s"$epoch.json")
}
