package io.sparkgazette.spark
package sink
package intents

import java.nio.file.{FileAlreadyExistsException, Files, StandardOpenOption}
import java.util.{Base64, UUID}

import scala.jdk.CollectionConverters._
import scala.util.Try

import io.sparkgazette.spark.errors.GazetteErrors
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.sparkgazette.message.{AckIntent, ProducerId}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, LocalFileSystem, Path, RawLocalFileSystem}

/** The sink's durable record of each write's ACK intents, under the checkpoint location: a
  * stream's epochs in `<checkpointLocation>/gazette-sink/ack-intents/<epoch>.json`, batch jobs
  * in `<checkpointLocation>/gazette-sink/batches/<batchId>.json`, each written whole or not at all,
  * and never replaced.
  *
  * A write whose intents are recorded is committed, whatever happened next: its ACKs are
  * (re-)appended until they land, and its writers, if Spark runs it again, write nothing.
  */
private[sink] final class AckIntentLog private (dir: Path, conf: Configuration) {
  private lazy val fs: FileSystem = dir.getFileSystem(conf)
  private val mapper = new ObjectMapper()

  def contains(key: String): Boolean = fs.exists(file(key))

  def read(key: String): Option[IntentRecord] =
    if (!contains(key)) None
    else {
      val in = fs.open(file(key))
      try Some(parse(mapper.readTree(in)))
      finally in.close()
    }

  /** The record of the latest epoch: where the stream's producers stand. */
  def latest(): Option[IntentRecord] =
    if (!fs.exists(dir)) None
    else fs.listStatus(dir).flatMap(s => Try(s.getPath.getName.stripSuffix(".json").toLong).toOption).reduceOption(
      _ max _).flatMap(e =>
      read(e.toString))

  private def parse(node: JsonNode): IntentRecord = {
    val intents = node.get("intents").elements().asScala.map { n =>
      AckIntent(n.get("journal").asText(), Base64.getDecoder.decode(n.get("intent").asText()),
        Option(n.get("clock")).fold(0L)(_.asLong))
    }.toList
    val producers = Option(node.get("producers")).map { p =>
      SinkProducers(
        p.get("seed").asLong(),
        p.get("lastAcks").elements().asScala.map { a =>
          (ProducerId(java.lang.Long.parseUnsignedLong(a.get("producer").asText(), 16)), a.get("journal").asText()) ->
            a.get("clock").asLong()
        }.toMap,
        Option(p.get("run")).fold("")(_.asText()),
        Option(p.get("generations")).toSeq.flatMap(_.fields().asScala.map(f => f.getKey.toInt -> f.getValue.asInt()))
          .toMap
      )
    }
    val staged = Option(node.get("staged")).toSeq.flatMap(_.elements().asScala.map { n =>
      StagedRun(
        n.get("journal").asText(),
        n.get("path").asText(),
        n.get("bytes").asLong(),
        n.get("producer").asText(),
        n.get("clock").asLong(),
        n.get("token").asText(),
        n.get("revision").asLong(),
        Base64.getDecoder.decode(n.get("quietAck").asText())
      )
    })
    val journals = Option(node.get("journals")).toSeq.flatMap(_.elements().asScala.map(_.asText()))
    IntentRecord(intents, producers, staged, journals)
  }

  /** Whether the staged runs of `key` were all appended (a mark made after they were). */
  def published(key: String): Boolean = marked(key, "published")

  def markPublished(key: String): Unit = mark(key, "published")

  /** Whether `key` has the mark `name` (an empty file beside its record). */
  def marked(key: String, name: String): Boolean = fs.exists(new Path(dir, s"$key.$name"))

  def mark(key: String, name: String): Unit = {
    val at = new Path(dir, s"$key.$name")
    localFile(at) match { // as record writes, without chmod
      case Some(f) =>
        try Files.createFile(f.toPath)
        catch { case _: FileAlreadyExistsException => }
      case None => fs.create(at, true).close()
    }
  }

  /** Records `intents` under `key` unless something is recorded there already, and returns
    * what is recorded: a record, once made, is never replaced (a zombie driver may race the
    * live one). The record appears whole: written aside, then linked or renamed into place,
    * which fails where the name exists (a hard link on the local file system, whose rename
    * would replace it; rename elsewhere, as on HDFS).
    */
  def record(key: String, record: IntentRecord): IntentRecord = {
    val node = mapper.createObjectNode()
    node.put("key", key)
    val array = node.putArray("intents")
    record.intents.foreach { i =>
      array.addObject().put("journal", i.journal).put("intent", Base64.getEncoder.encodeToString(i.intent)).put(
        "clock", i.clock)
    }
    if (record.staged.nonEmpty) {
      val staged = node.putArray("staged")
      record.staged.foreach { r =>
        staged.addObject().put("journal", r.journal).put("path", r.path).put("bytes", r.bytes).put(
          "producer", r.producer)
          .put("clock", r.clock).put("token", r.token).put("revision", r.revision).put(
            "quietAck", Base64.getEncoder.encodeToString(r.quietAck))
      }
    }
    if (record.journals.nonEmpty) {
      val journals = node.putArray("journals")
      record.journals.foreach(journals.add)
    }
    record.producers.foreach { p =>
      val o = node.putObject("producers")
      o.put("seed", p.seed)
      o.put("run", p.run)
      val generations = o.putObject("generations")
      p.generations.toSeq.sorted.foreach { case (partition, g) => generations.put(partition.toString, g) }
      val acks = o.putArray("lastAcks")
      p.lastAcks.toSeq.sortBy(a => (a._1._2, a._1._1.value)).foreach { case ((producer, journal), clock) =>
        acks.addObject().put("producer", producer.toString).put("journal", journal).put("clock", clock)
      }
    }
    val bytes = mapper.writeValueAsBytes(node)
    val placed = localFile(file(key)) match {
      // Written with Java's own calls: Hadoop's local file system sets a new file's permissions by
      // running chmod, twice with its checksum file, which a real-time batch's record would pay
      // at every batch boundary, while no task reads. Reads need no checksum file.
      case Some(to) =>
        val parent = Files.createDirectories(to.toPath.getParent)
        val tmp = parent.resolve(s".$key.${UUID.randomUUID()}.tmp")
        try {
          Files.write(tmp, bytes, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
          try { Files.createLink(to.toPath, tmp); true }
          catch { case _: FileAlreadyExistsException => false }
        } finally Files.deleteIfExists(tmp)
      case None =>
        fs.mkdirs(dir)
        val tmp = new Path(dir, s".$key.${UUID.randomUUID()}.tmp")
        val out = fs.create(tmp, true)
        try out.write(bytes)
        finally out.close()
        try fs.rename(tmp, file(key))
        finally if (fs.exists(tmp)) fs.delete(tmp, false)
    }
    if (placed) record
    else read(key).getOrElse(throw GazetteErrors.checkpointWriteFailed(s"the ACK intents of $key", file(key).toString))
  }

  private def localFile(p: Path): Option[java.io.File] = fs match {
    case l: LocalFileSystem => Some(l.pathToFile(p))
    case r: RawLocalFileSystem => Some(r.pathToFile(p))
    case _ => None
  }

  /** Sets `key`'s record aside, under `<key>.retired`: a write of the key that follows writes
    * anew instead of taking it as committed.
    */
  def retire(key: String): Unit = if (contains(key)) fs.rename(file(key), new Path(dir, s"$key.retired"))

  /** Forgets epochs more than `keep` before `epoch`: Spark never re-runs them. */
  def prune(epoch: Long, keep: Int = 100): Unit =
    if (fs.exists(dir))
      fs.listStatus(dir).map(_.getPath).foreach { p =>
        Try(p.getName.takeWhile(_ != '.').toLong).toOption.filter(
          _ < epoch - keep).foreach(_ =>
          fs.delete(p, false))
      }

  private def file(key: String) = new Path(dir, s"$key.json")
}

private[sink] object AckIntentLog {
  private def root(checkpointLocation: String) = new Path(checkpointLocation, "gazette-sink")

  /** A stream's epochs, keyed by epoch number. */
  def epochs(checkpointLocation: String, conf: Configuration): AckIntentLog =
    new AckIntentLog(new Path(root(checkpointLocation), "ack-intents"), conf)

  /** A real-time stream's batches, keyed by batch id, recorded as each starts. */
  def realTimeBatches(checkpointLocation: String, conf: Configuration): AckIntentLog =
    new AckIntentLog(new Path(root(checkpointLocation), "real-time"), conf)

  /** Batch jobs, keyed by the user's `batchId`. */
  def batches(checkpointLocation: String, conf: Configuration): AckIntentLog =
    new AckIntentLog(new Path(root(checkpointLocation), "batches"), conf)
}
