package io.sparkgazette.spark
package admin

import java.util.Base64

import scala.jdk.CollectionConverters._

import io.sparkgazette.client.protocol.{CompressionCodec, JournalSpec}
import io.sparkgazette.client.{GazetteClient, JournalSpecs}
import io.sparkgazette.message.{Framing, Publisher}
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.hadoop.SerializableConfiguration
import io.sparkgazette.spark.options.GazetteOptions
import com.fasterxml.jackson.databind.node.ObjectNode
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.spark.sql.SparkSession

/** Administration for the Python package's helpers (called through py4j, so JSON in and out):
  * list journals with their write heads, apply journal specs, publish test messages, and tell a
  * streaming query's lag from its checkpoint.
  */
private[admin] object Admin {
  private val mapper = new ObjectMapper()

  /** How long the lag tool retries a broker unless option `retryTimeout` says otherwise. */
  val LagRetryTimeout = "10s"

  /** `connectionJson`: the connection options (rpcTimeout, TLS files, authToken) as a JSON object. */
  private def withClient[T](broker: String, connectionJson: String)(f: GazetteClient => T): T = {
    val connection =
      mapper.readTree(connectionJson).properties().asScala.map(e => e.getKey -> e.getValue.asText()).toMap
    val client = new GazetteClient(GazetteOptions.connectionConfig(connection + (GazetteOptions.Broker -> broker)))
    try GazetteErrors.brokerCalls(f(client))
    finally client.close()
  }

  /** `[{"name", "labels": {name: [values]}, "writeHead"}]` of the journals `selector` matches. */
  def listJournals(broker: String, selector: String, connectionJson: String): String =
    withClient(broker, connectionJson) { client =>
      val out = mapper.createArrayNode()
      client.list(selector).map(_.getSpec).sortBy(_.name).foreach { spec =>
        val node = out.addObject()
        node.put("name", spec.name)
        val labels = node.putObject("labels")
        spec.labels.toSeq.flatMap(_.labels).groupBy(_.name).foreach { case (k, ls) =>
          val values = labels.putArray(k)
          ls.foreach(l => values.add(l.value))
        }
        node.put("writeHead", client.writeHead(spec.name))
      }
      mapper.writeValueAsString(out)
    }

  /** Creates or updates journals from flattened specs `[{"name", "replication", "labels":
    * [[name, value]], "fragment": {"length", "compression_codec", "stores", "refresh_interval"}}]`
    * and waits until each accepts appends.
    */
  def applySpecs(broker: String, specsJson: String, connectionJson: String): Unit = withClient(broker, connectionJson) {
    client =>
      client.upsertAndAwait(mapper.readTree(specsJson).elements().asScala.map(spec).toList)
  }

  /** Publishes base64-encoded payloads to `journal` as committed messages with UUIDs, in one
    * append; returns the write head after it.
    */
  def publish(broker: String, journal: String, payloadsJson: String, uuidPointer: String, uuidField: Int,
      connectionJson: String): Long =
    withClient(broker, connectionJson) { client =>
      val spec = client.list(s"name=$journal").headOption.map(_.getSpec)
        .getOrElse(throw GazetteErrors.missingJournal(journal, None))
      val ct = spec.labels.toSeq.flatMap(_.labels).find(_.name == "content-type").map(_.value).getOrElse("")
      val framing = Framing.forContentType(ct, uuidPointer, uuidField).fold(
        p => throw GazetteErrors.unwritableFraming(journal, p), identity)
      val publisher = new Publisher()
      mapper.readTree(payloadsJson).elements().asScala.foreach { p =>
        publisher.publishCommitted(journal, framing, Base64.getDecoder.decode(p.asText()))
      }
      publisher.drain().foreach { case (j, bytes) => client.append(j, bytes) }
      client.writeHead(journal)
    }

  /** Where the streaming query whose checkpoint location is `checkpoint` (any file system the
    * session's Hadoop configuration reaches) stands in each journal it reads, against the
    * journals' write heads now: see [[QueryLag.json]]. The checkpoint is only read, so the query
    * may be running or stopped.
    */
  def lag(checkpoint: String, broker: String, connectionJson: String): String = {
    val conf = SerializableConfiguration.ofSession(SparkSession.active).value
    val positions = CheckpointPositions.read(new SparkCheckpoint(checkpoint, conf))
    // A person waits for the answer: a broker that does not answer is said so soon, not after
    // the two minutes a query's tasks keep retrying by default.
    val connection = mapper.readTree(connectionJson).asInstanceOf[ObjectNode]
    if (!connection.has(GazetteOptions.RetryTimeout)) connection.put(GazetteOptions.RetryTimeout, LagRetryTimeout)
    withClient(broker, mapper.writeValueAsString(connection)) { client =>
      val measuredAt = System.currentTimeMillis()
      QueryLag.json(positions, QueryLag.measure(positions, client, measuredAt), measuredAt)
    }
  }

  // gazctl's spec, flattened by the Python helpers: what it leaves out takes gazctl's defaults.
  private def spec(n: JsonNode): JournalSpec = {
    val f = Option(n.get("fragment"))
    def text(k: String): Option[String] = f.flatMap(x => Option(x.get(k))).map(_.asText())
    val name = n.get("name").asText()
    val defaults = JournalSpecs.Fragment()
    val codec = text("compression_codec").map { c =>
      CompressionCodec.fromName(c).getOrElse(throw GazetteErrors.invalidJournalSpec(name, "compression_codec", c,
          CompressionCodec.values.filterNot(_ == CompressionCodec.INVALID).map(_.name).mkString("one of ", ", ", "")))
    }
    JournalSpecs(
      name,
      Option(n.get("labels")).toSeq.flatMap(_.elements().asScala).map(l => l.get(0).asText() -> l.get(1).asText()),
      replication = Option(n.get("replication")).map(_.asInt()).getOrElse(1),
      fragment = JournalSpecs.Fragment(
        length = text("length").map(_.toLong).getOrElse(defaults.length),
        codec = codec.getOrElse(defaults.codec),
        stores = f.flatMap(x => Option(x.get("stores"))).toSeq.flatMap(_.elements().asScala.map(_.asText())),
        refreshSeconds = text("refresh_interval").map(seconds).getOrElse(defaults.refreshSeconds)
      )
    )
  }

  // Go durations as gazctl writes them: 1m0s, 30s, 5m, 1h.
  private def seconds(d: String): Long =
    """(\d+)([hms])""".r.findAllMatchIn(d).map { m =>
      m.group(1).toLong * (m.group(2) match { case "h" => 3600L; case "m" => 60L; case _ => 1L })
    }.sum
}
