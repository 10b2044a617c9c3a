package io.sparkgazette.spark
package source
package rows

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.control.NonFatal

import com.fasterxml.jackson.core.{JsonFactory, JsonParser, StreamReadConstraints}
import io.sparkgazette.message.{JsonSyntax, RawMessage}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.json.JacksonParser
import org.apache.spark.sql.types.StructType
import org.apache.spark.unsafe.types.UTF8String

/** ndjson payloads parsed by Spark's own JSON parser (what `from_json` and the JSON file source
  * use), with Spark's JSON options: the same values, time formats and malformed records. Jackson
  * reads the payload's bytes as they are; only a malformed one is ever made a string.
  */
private[rows] object JsonPayloads {

  /** A parser of `required`'s fields, with Spark's JSON options `options` (`timeZone` and
    * `corruptColumn` where they name none).
    */
  def parser(required: StructType, corrupt: Option[String], options: Map[String, String], timeZone: String,
      corruptColumn: String): PayloadParser = {
    val parsed = StructType(required.filterNot(f => corrupt.contains(f.name)))
    val (jackson, limits) = SparkJson.parser(parsed, options, timeZone, corruptColumn)
    val open = (factory: JsonFactory, payload: Array[Byte]) => factory.createParser(payload): JsonParser
    val text = (payload: Array[Byte]) => UTF8String.fromBytes(payload)
    val whole = PayloadParser.failureSafe(payload => jackson.parse(payload, open, text), required, corrupt)
    if (corrupt.isDefined) whole
    else
      new Selective(whole, jackson, open, text, parsed.fieldNames.map(_.getBytes(UTF_8)), limits)
  }

  /** What Spark's parser (Jackson, as Spark's JSON options set it up) refuses in any member of a
    * message, read or not: nesting deeper than `depth`, numbers, keys or strings longer than
    * `number`, `name` or `string`.
    */
  private[source] final case class Limits(depth: Int, number: Int, name: Int, string: Int)

  private[source] object Limits {
    val Default: Limits = SparkJson.limits(StreamReadConstraints.defaults())
  }

  /** Hands Spark's parser only the members of a message the query reads, where the framing says
    * where they lie (see [[RawMessage.members]]): a wide member the query skips costs nothing
    * more than the framing's check. Members come in their order, repeated keys too, so Spark's
    * parser makes the same row of them; anything it rejects is parsed again whole, to fail as it
    * always does, and so is a message with a member it skips but would refuse (see [[select]]).
    * (Without a corrupt-record column only: that column holds the whole payload.)
    */
  private final class Selective(whole: PayloadParser, jackson: JacksonParser,
      open: (JsonFactory, Array[Byte]) => JsonParser, text: Array[Byte] => UTF8String, names: Array[Array[Byte]],
      limits: Limits)
      extends PayloadParser {
    override def apply(payload: Array[Byte]): Either[String, InternalRow] = whole(payload)

    override def apply(message: RawMessage): Either[String, InternalRow] = {
      val selected = if (message.members == null) null else select(message.bytes, message.members, names, limits)
      if (selected == null) whole(message.bytes)
      else {
        val rows =
          try jackson.parse(selected, open, text)
          catch { case NonFatal(_) => Nil }
        rows.headOption match {
          case Some(row) => Right(row)
          case None => whole(message.bytes)
        }
      }
    }

  }

  /** The object of the members of `b` (`m`, see [[RawMessage.members]]) whose keys may be among
    * `names`; null when that would be most of the payload anyway, or when a member left out holds
    * what Spark's parser refuses (`limits`, bytes that may not be UTF-8): parsed whole, the
    * message fails as it would without a selection.
    */
  private[source] def select(b: Array[Byte], m: Array[Int], names: Array[Array[Byte]], limits: Limits = Limits.Default)
      : Array[Byte] = {
    import JsonSyntax.Members._
    def at(k: Int, field: Int): Int = m(k * Fields + field)
    val count = m.length / Fields
    var keep = 0L // a bit per member among the first 64; a wider object is parsed whole
    var bytes = 0
    var kept = 0
    if (count > 64) return null
    var k = 0
    while (k < count) {
      if (reads(b, at(k, KeyStart) + 1, at(k, KeyEnd) - 1, names)) {
        keep |= 1L << k; kept += 1; bytes += at(k, End) - at(k, KeyStart)
      } else if (at(k, NotAscii) != 0 || at(k, Depth) + 1 > limits.depth || at(k, LongestNumber) > limits.number ||
        at(k, LongestKey) > limits.name || at(k, LongestString) > limits.string) return null
      k += 1
    }
    if (kept == count || bytes * 2 > b.length) return null
    val out = new Array[Byte](bytes + kept + 1 + (if (kept == 0) 1 else 0))
    out(0) = '{'
    var to = 1
    k = 0
    while (k < count) {
      if ((keep & (1L << k)) != 0) {
        if (to > 1) { out(to) = ','; to += 1 }
        val n = at(k, End) - at(k, KeyStart)
        System.arraycopy(b, at(k, KeyStart), out, to, n)
        to += n
      }
      k += 1
    }
    out(to) = '}'
    out
  }

  // Whether the key in b[from, until) may be a field read: equal to one's name, ignoring ASCII
  // case (Spark matches names exactly; keeping more only costs time), or escaped.
  private def reads(b: Array[Byte], from: Int, until: Int, names: Array[Array[Byte]]): Boolean = {
    var i = from
    while (i < until) { if (b(i) == '\\') return true; i += 1 }
    var n = 0
    while (n < names.length) {
      val name = names(n)
      if (name.length == until - from) {
        var j = 0
        while (j < name.length && lower(name(j)) == lower(b(from + j))) j += 1
        if (j == name.length) return true
      }
      n += 1
    }
    false
  }

  private def lower(c: Byte): Int = if (c >= 'A' && c <= 'Z') c + 32 else c
}
