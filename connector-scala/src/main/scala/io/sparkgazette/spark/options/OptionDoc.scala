package io.sparkgazette.spark
package options

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/** One option as `options.json` declares it: its name, the side that takes it, the type of its
  * values, whether streams, batch queries or both take it, its default and what it does.
  */
private[spark] final case class OptionDoc(name: String, side: OptionDoc.Side, valueType: OptionDoc.ValueType,
    modes: Set[OptionDoc.Mode], default: String, doc: String)

private[spark] object OptionDoc {
  sealed abstract class Side(val key: String)
  case object Source extends Side("source")
  case object Sink extends Side("sink")

  /** How the clients reach the brokers: the source, the sink and the admin helpers take these. */
  case object Connection extends Side("connection")

  /** Spark's parsing options, which the source takes with a schema. */
  case object Parsing extends Side("parsing")

  /** What an option's value is; the Python helpers' keywords take the matching Python types. */
  sealed abstract class ValueType(val key: String)
  case object Text extends ValueType("string")
  case object Bool extends ValueType("boolean")
  case object WholeNumber extends ValueType("integer")
  case object Duration extends ValueType("duration")

  /** `earliest`, `latest`, or JSON offsets by journal. */
  case object Offsets extends ValueType("offsets")

  /** Milliseconds since 1970. */
  case object Timestamp extends ValueType("timestamp")

  /** JSON milliseconds since 1970 by journal. */
  case object Timestamps extends ValueType("timestamps")

  /** Comma-separated journal names. */
  case object Journals extends ValueType("journals")

  val ValueTypes: Seq[ValueType] = Seq(Text, Bool, WholeNumber, Duration, Offsets, Timestamp, Timestamps, Journals)

  sealed abstract class Mode(val key: String)
  case object Stream extends Mode("stream")
  case object Batch extends Mode("batch")

  private val Sides = Seq(Source, Sink, Connection, Parsing)
  private val Modes = Seq(Stream, Batch)

  /** Where the reference lives: data in the jar, so that the Python package's tests and the
    * options page read the very list the connector checks names against.
    */
  val Resource = "/io/sparkgazette/spark/options/options.json"

  lazy val all: Seq[OptionDoc] = {
    val in = getClass.getResourceAsStream(Resource)
    require(in != null, s"$Resource is missing from the connector's jar")
    val root = try new ObjectMapper().readTree(in)
    finally in.close()
    root.elements().asScala.map(parse).toList
  }

  private def parse(o: JsonNode): OptionDoc = {
    def text(field: String): String =
      Option(o.get(field)).filter(_.isTextual).map(_.asText)
        .getOrElse(throw new IllegalStateException(s"$Resource: an option without '$field': $o"))
    def one[T](keys: Seq[T], key: T => String, value: String): T =
      keys.find(key(_) == value).getOrElse(throw new IllegalStateException(s"$Resource: '$value' in $o"))
    OptionDoc(
      text("name"),
      one[Side](Sides, _.key, text("side")),
      one[ValueType](ValueTypes, _.key, text("type")),
      o.get("modes").elements().asScala.map(m => one[Mode](Modes, _.key, m.asText)).toSet,
      text("default"),
      text("doc")
    )
  }
}
