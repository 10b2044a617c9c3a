package io.sparkgazette.spark
package errors

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/** A situation a user would handle in its own way: its name, its SQLSTATE, what it means (the
  * operations page's table) and its wordings, by key: the condition's name where it has one
  * wording, `NAME.VARIANT` for each of its variants where it has several.
  */
private[errors] final case class ErrorCondition(
    name: String,
    sqlState: String,
    meaning: String,
    wordings: Map[String, MessageTemplate]
)

/** The connector's error conditions and their messages, read once from `error-conditions.json`
  * beside this class: the shape of Spark's own file, a condition's `message` lines and its
  * `sqlState`, and besides them its `meaning`. A condition worded differently in different
  * situations has `variants`, each with its `message`; unlike a Spark sub-class, a variant only
  * picks the words: the error carries its condition's name, the one users match and the
  * operations page lists. A message's lines join with a space (Spark's with a line break): the
  * connector's messages are one line each, in logs and in PySpark's `str(e)` alike.
  */
private[errors] object ErrorConditions {
  private val Resource = "error-conditions.json"

  /** What the connector itself should have made impossible. */
  final val Internal = "GAZETTE_INTERNAL_ERROR"

  /** Every condition, in the file's order, which the operations page keeps. */
  val all: Seq[ErrorCondition] = read()

  private val wordings: Map[String, (ErrorCondition, MessageTemplate)] =
    all.flatMap(c => c.wordings.map { case (key, wording) => key -> (c -> wording) }).toMap

  // An internal error is worded by its one parameter, so raising one cannot fail in turn.
  require(wordings.get(Internal).exists(_._2.placeholders == Seq("message")),
    s"$Resource: $Internal must be worded '<message>'")

  /** An error's condition and SQLSTATE, and its message: the wording `key` filled from
    * `parameters`. An unknown key or a parameter the wording needs and was not given is the
    * connector's own mistake, raised as an internal error rather than shown as a gap.
    */
  def message(key: String, parameters: Map[String, String]): ConditionMessage = wordings.get(key) match {
    case None => throw internal(s"No error condition or variant $key in $Resource")
    case Some((condition, wording)) =>
      val missing = wording.missing(parameters)
      if (missing.nonEmpty)
        throw internal(s"The message of $key needs parameter(s) ${missing.mkString(", ")}, which its error " +
          s"was not given (given: ${parameters.keys.toSeq.sorted.mkString(", ")})")
      ConditionMessage(condition.name, condition.sqlState, wording.format(parameters))
  }

  private def internal(problem: String): GazetteIllegalStateException =
    GazetteIllegalStateException(Internal, Map("message" -> problem))

  private def read(): Seq[ErrorCondition] = {
    val in = getClass.getResourceAsStream(Resource)
    if (in == null) throw new IllegalStateException(s"$Resource is missing beside ${getClass.getName}")
    val root = try new ObjectMapper().readTree(in)
    finally in.close()
    root.properties().asScala.toList.map(e => condition(e.getKey, e.getValue))
  }

  private def condition(name: String, node: JsonNode): ErrorCondition = {
    def malformed(problem: String): Nothing = throw new IllegalStateException(s"$Resource: $name $problem")
    def text(field: String): String =
      Option(node.get(field)).filter(_.isTextual).map(_.textValue).getOrElse(malformed(s"has no string '$field'"))
    def wording(key: String, n: JsonNode): (String, MessageTemplate) = {
      val lines = Option(n.get("message")).filter(_.isArray).map(_.elements().asScala.toList)
        .filter(ls => ls.nonEmpty && ls.forall(_.isTextual)).getOrElse(malformed(s"has no 'message' lines for $key"))
      key -> MessageTemplate(lines.map(_.textValue).mkString(" "))
    }
    val wordings = Option(node.get("variants")) match {
      case None => Map(wording(name, node))
      case Some(_) if node.has("message") => malformed("has both a 'message' and 'variants'")
      case Some(variants) => variants.properties().asScala.map(v => wording(s"$name.${v.getKey}", v.getValue)).toMap
    }
    if (wordings.isEmpty) malformed("has no variants")
    ErrorCondition(name, text("sqlState"), text("meaning"), wordings)
  }
}

/** What an error built from a wording says: its condition, SQLSTATE and message. */
private[errors] final case class ConditionMessage(condition: String, sqlState: String, text: String)
