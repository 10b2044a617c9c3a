package io.sparkgazette.spark
package options

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/** One option as `options.json` declares it: its name, the side that takes it, the type of its
  * values, whether streams, batch queries or both take it, its default and what it does. Spark's
  * own options (side [[OptionDoc.Spark]]) say too which sides Spark hands them to (`givenTo`), and
  * whether Spark reads them in this spelling only (`exactCase`).
  */
private[options] final case class OptionDoc(name: String, side: OptionDoc.Side, valueType: OptionDoc.ValueType,
    modes: Set[OptionDoc.Mode], default: String, doc: String, givenTo: Set[OptionDoc.Side] = Set.empty,
    exactCase: Boolean = false)

private[options] object OptionDoc {
  sealed abstract class Side(val key: String)
  case object Source extends Side("source")
  case object Sink extends Side("sink")

  /** How the clients reach the brokers: the source, the sink and the admin helpers take these. */
  case object Connection extends Side("connection")

  /** Spark's parsing options, which the source takes with a schema. */
  case object Parsing extends Side("parsing")

  /** Spark's own options, which Spark reads from what a query was given and hands the connector
    * with its own: not the connector's to check, but let through on the sides Spark hands them to.
    * The connector takes them in any capitals: what it is handed may have lost them (Spark Connect
    * hands a load its option names in lower case).
    */
  case object Spark extends Side("spark")

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

  private val Sides = Seq(Source, Sink, Connection, Parsing, Spark)
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
    val side = one[Side](Sides, _.key, text("side"))
    val sparks = Seq("givenTo", "exactCase").filter(o.has)
    if (side == Spark && sparks.size < 2 || side != Spark && sparks.nonEmpty)
      throw new IllegalStateException(s"$Resource: givenTo and exactCase are for Spark's own options, and theirs: $o")
    OptionDoc(
      text("name"),
      side,
      one[ValueType](ValueTypes, _.key, text("type")),
      o.get("modes").elements().asScala.map(m => one[Mode](Modes, _.key, m.asText)).toSet,
      text("default"),
      text("doc"),
      if (side == Spark)
        o.get("givenTo").elements().asScala.map(s => one[Side](Seq(Source, Sink), _.key, s.asText)).toSet
      else Set.empty,
      side == Spark && o.get("exactCase").asBoolean()
    )
  }
}
