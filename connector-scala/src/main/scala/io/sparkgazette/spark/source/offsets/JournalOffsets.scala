package io.sparkgazette.spark
package source
package offsets

import scala.collection.immutable.SortedMap
import scala.jdk.CollectionConverters._

import io.sparkgazette.spark.errors.GazetteErrors
import com.fasterxml.jackson.databind.node.JsonNodeType
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.sparkgazette.message.{ProducerId, ProducerState}
import org.apache.spark.sql.connector.read.streaming.Offset

/** The source's offset: each journal's [[JournalPosition]], written as a JSON object
  * (`{"events/part-000": {"offset": 1024, "revision": 17, "origin": 0}}`). Plain numbers are read
  * as offsets, the shape the `startingOffsets` option takes.
  *
  * In real-time mode, where batches end where the readers stand when time is up, the offset also
  * carries each journal's producers' states there (`"producers": [[id, lastAck, begin], ...]`,
  * a fourth number where a producer's sequence clock is above its lastAck): the next batch
  * continues read committed from them. Micro-batches keep states in files instead and never
  * write this member.
  */
private[spark] final case class JournalOffsets(positions: SortedMap[String, JournalPosition],
    producers: Map[String, Seq[ProducerState]] = Map.empty)
    extends Offset {
  override def json(): String = JournalOffsets.toJson(positions, producers)

  lazy val offsets: SortedMap[String, Long] = positions.map { case (j, p) => j -> p.offset }

  def apply(journal: String): Long = positions(journal).offset

  def get(journal: String): Option[Long] = positions.get(journal).map(_.offset)

  def journals: Iterable[String] = positions.keys

  /** These positions moved up to `heads` where a head is past them (producers' states dropped). */
  def upTo(heads: Map[String, Long]): JournalOffsets =
    JournalOffsets(positions.map { case (j, p) =>
      j -> heads.get(j).filter(_ > p.offset).fold(p)(h => p.copy(offset = h))
    })
}

private[spark] object JournalOffsets {
  private val mapper = new ObjectMapper()

  def apply(positions: Map[String, JournalPosition]): JournalOffsets =
    new JournalOffsets(SortedMap(positions.toSeq: _*))

  def fromJson(json: String): JournalOffsets = {
    val states = entries(json).collect {
      case (j, v) if v.isObject && v.has("producers") =>
        val ps = v.get("producers")
        if (!ps.isArray) throw GazetteErrors.offsetNotWhole(j, "producers", ps.toString)
        j -> ps.elements().asScala.map { p =>
          if (!p.isArray || p.size() < 3 || p.size() > 4)
            throw GazetteErrors.offsetNotWhole(j, "producers", p.toString)
          ProducerState(
            j,
            ProducerId(whole(j, "producer", p.get(0))),
            whole(j, "lastAck", p.get(1)),
            whole(j, "begin", p.get(2)),
            if (p.size() == 4) whole(j, "sequenceClock", p.get(3)) else Long.MinValue
          )
        }.toList
    }.toMap
    new JournalOffsets(SortedMap(parsePositions(json).toSeq: _*), states)
  }

  /** Journal offsets from a JSON object of whole numbers; anything else is an error. */
  def parseJson(json: String): Map[String, Long] =
    entries(json).map { case (j, v) => j -> whole(j, "offset", v) }.toMap

  /** Positions from a JSON object whose values are offsets or `{"offset", "revision", "origin"}`. */
  def parsePositions(json: String): Map[String, JournalPosition] =
    entries(json).map { case (j, v) =>
      j ->
        (if (v.isObject) {
           def field(name: String, default: Long) = Option(v.get(name)).map(whole(j, name, _)).getOrElse(default)
           JournalPosition(whole(j, "offset", v.get("offset")), field("revision", 0L), field("origin", -1L))
         } else JournalPosition(whole(j, "offset", v)))
    }.toMap

  def toJson(positions: Map[String, JournalPosition],
      producers: Map[String, Seq[ProducerState]] = Map.empty): String = {
    val node = mapper.createObjectNode()
    positions.toSeq.sortBy(_._1).foreach { case (j, p) =>
      val entry = node.putObject(j).put("offset", p.offset).put("revision", p.revision).put("origin", p.origin)
      producers.get(j).foreach { ps =>
        val array = entry.putArray("producers")
        ps.foreach { s =>
          val state = array.addArray().add(s.producer.value).add(s.lastAck).add(s.begin)
          if (s.sequenceClock > s.lastAck) state.add(s.sequenceClock)
        }
      }
    }
    mapper.writeValueAsString(node)
  }

  private def entries(json: String): Seq[(String, JsonNode)] = {
    val node = mapper.readTree(json)
    if (node == null || node.getNodeType != JsonNodeType.OBJECT)
      throw GazetteErrors.offsetsNotAnObject(json)
    node.properties().asScala.map(e => e.getKey -> e.getValue).toList
  }

  private def whole(journal: String, what: String, v: JsonNode): Long = {
    if (v == null || !v.canConvertToLong || !v.isIntegralNumber)
      throw GazetteErrors.offsetNotWhole(journal, what, String.valueOf(v))
    v.asLong()
  }
}
