package io.sparkgazette.spark

import java.net.{URLDecoder, URLEncoder}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import io.sparkgazette.message.{ProducerId, ProducerState}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

/** A journal's read-committed state at a batch boundary: where reading resumes (the end of the
  * last message the batch consumed, at or past the boundary) and its producers' states.
  */
final case class SequencerState(resume: Long, producers: Seq[ProducerState])

/** Sequencer states by (journal, offset) under the source's checkpoint directory, one small
  * JSON file each, written by rename so that a reader sees all of a state or none. The task of
  * a batch `[start, end)` reads the state at `start` and writes the one at `end`; re-running it
  * writes the same state again. The driver prunes states below the committed offsets.
  */
final class SequencerStateStore(dir: String, conf: Configuration) {
  import SequencerStateStore._

  private val root = new Path(dir)
  private lazy val fs: FileSystem = root.getFileSystem(conf)

  def location: String = dir

  def load(journal: String, offset: Long): Option[SequencerState] = {
    val path = file(journal, offset)
    if (!fs.exists(path)) None
    else {
      val in = fs.open(path)
      try Some(decode(journal, mapper.readTree(in)))
      finally in.close()
    }
  }

  /** Whether any state of `journal` was ever saved: a missing one is then an incomplete checkpoint. */
  def hasAny(journal: String): Boolean = {
    val d = journalDir(journal)
    fs.exists(d) && fs.listStatus(d).exists(_.getPath.getName.endsWith(Suffix))
  }

  def save(journal: String, offset: Long, state: SequencerState): Unit = {
    val path = file(journal, offset)
    fs.mkdirs(path.getParent)
    val tmp = new Path(path.getParent, s".${path.getName}.${UUID.randomUUID()}.tmp")
    val out = fs.create(tmp, true)
    try out.write(mapper.writeValueAsBytes(encode(state)))
    finally out.close()
    // A concurrent or earlier attempt of the same task may have saved the same state first.
    if (!fs.rename(tmp, path)) {
      fs.delete(tmp, false)
      if (!fs.exists(path)) throw new IllegalStateException(s"cannot save sequencer state $path")
    }
  }

  /** Deletes the states of `journal` at offsets below `offset`. */
  def prune(journal: String, offset: Long): Unit = {
    val d = journalDir(journal)
    if (fs.exists(d))
      fs.listStatus(d).map(_.getPath).filter(_.getName.endsWith(Suffix)).foreach { p =>
        p.getName.stripSuffix(Suffix).toLongOption.filter(_ < offset).foreach(_ => fs.delete(p, false))
      }
  }

  private def journalDir(journal: String) = new Path(root, URLEncoder.encode(journal, UTF_8))
  private def file(journal: String, offset: Long) = new Path(journalDir(journal), s"$offset$Suffix")
}

object SequencerStateStore {
  private val Suffix = ".json"
  private val mapper = new ObjectMapper()

  private def encode(s: SequencerState) = {
    val node = mapper.createObjectNode()
    node.put("resume", s.resume)
    val producers = node.putArray("producers")
    s.producers.foreach { p =>
      producers.addObject().put("producer", p.producer.toString).put("lastAck", p.lastAck).put("begin", p.begin)
    }
    node
  }

  private def decode(journal: String, node: com.fasterxml.jackson.databind.JsonNode) =
    SequencerState(
      node.get("resume").asLong(),
      node.get("producers").elements().asScala.map { p =>
        ProducerState(journal, ProducerId(java.lang.Long.parseUnsignedLong(p.get("producer").asText(), 16)),
          p.get("lastAck").asLong(), p.get("begin").asLong())
      }.toSeq)

  /** The journal a state directory's name stands for. */
  def journalOf(dirName: String): String = URLDecoder.decode(dirName, UTF_8)
}
