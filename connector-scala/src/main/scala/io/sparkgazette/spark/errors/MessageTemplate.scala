package io.sparkgazette.spark
package errors

import scala.util.matching.Regex

/** The wording of an error, with `<name>` where a message parameter goes: Spark's convention
  * for its own `error-conditions.json`, so that a message reads the same filled in as its
  * parameters say.
  */
private[errors] final case class MessageTemplate(text: String) {

  /** The parameters the wording needs, in the order it names them. */
  def placeholders: Seq[String] = MessageTemplate.Placeholder.findAllMatchIn(text).map(_.group(1)).toList.distinct

  /** The placeholders `parameters` does not fill. */
  def missing(parameters: Map[String, String]): Seq[String] = placeholders.filterNot(parameters.contains)

  /** The wording with each placeholder replaced by its parameter, which `parameters` must hold (see
    * [[missing]]). A value is put in as it is, never read for placeholders of its own: values come
    * from users and journals.
    */
  def format(parameters: Map[String, String]): String =
    MessageTemplate.Placeholder.replaceAllIn(text, m => Regex.quoteReplacement(String.valueOf(parameters(m.group(1)))))
}

private[errors] object MessageTemplate {

  /** `<name>`, as Spark writes them; `struct<journal: string, ...>` in a wording is not one. */
  val Placeholder: Regex = "<([A-Za-z][A-Za-z0-9_]*)>".r
}
