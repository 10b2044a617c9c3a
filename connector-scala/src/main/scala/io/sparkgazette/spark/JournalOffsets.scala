package io.sparkgazette.spark

import scala.collection.immutable.SortedMap
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.JsonNodeType
import org.apache.spark.sql.connector.read.streaming.Offset

/** The source's offset: for each journal, the byte offset of the next byte to read, written as
  * a JSON object (`{"events/part-000": 1024}`), the same shape the `startingOffsets` option takes.
  */
final case class JournalOffsets(offsets: SortedMap[String, Long]) extends Offset {
  override def json(): String = JournalOffsets.toJson(offsets)

  def apply(journal: String): Long = offsets(journal)

  def get(journal: String): Option[Long] = offsets.get(journal)

  def journals: Iterable[String] = offsets.keys
}

object JournalOffsets {
  private val mapper = new ObjectMapper()

  def apply(offsets: Map[String, Long]): JournalOffsets = new JournalOffsets(SortedMap(offsets.toSeq: _*))

  def fromJson(json: String): JournalOffsets = JournalOffsets(parseJson(json))

  /** Journal offsets from a JSON object of whole numbers; anything else is an error. */
  def parseJson(json: String): Map[String, Long] = {
    val node = mapper.readTree(json)
    if (node == null || node.getNodeType != JsonNodeType.OBJECT)
      throw new IllegalArgumentException(s"expected a JSON object of journal offsets, got: $json")
    node.properties().asScala.map { e =>
      val v = e.getValue
      if (!v.canConvertToLong || !v.isIntegralNumber)
        throw new IllegalArgumentException(s"offset of journal ${e.getKey} is not a whole number: $v")
      e.getKey -> v.asLong()
    }.toMap
  }

  def toJson(offsets: Map[String, Long]): String = {
    val node = mapper.createObjectNode()
    offsets.toSeq.sortBy(_._1).foreach { case (j, o) => node.put(j, o) }
    mapper.writeValueAsString(node)
  }
}
