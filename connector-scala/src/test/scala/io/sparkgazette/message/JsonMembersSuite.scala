package io.sparkgazette.message

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/** What [[JsonSyntax.Members]] records of each member of an object, against the member's bytes. */
class JsonMembersSuite extends AnyFunSuite {
  private val strings =
    Seq("", "a", "plain words", "é", "日本", "a\\\"b", "\\u00e9", "x\\\\", "ünïcödé and ascii", "\\n€")
  private val values = Seq("1", "-0.5e3", "true", "null", "[]", "{}", "[\"é\", 1]", "{\"k\": \"ß\"}", "[[\"a\"]]")

  test("a member is marked not ASCII exactly when its bytes hold a byte that is not") {
    val seed = System.nanoTime()
    val rnd = new Random(seed)
    val members = new JsonSyntax.Members
    for (_ <- 0 until 5000) {
      def pick[T](s: Seq[T]): T = s(rnd.nextInt(s.size))
      def text: String = Seq.fill(1 + rnd.nextInt(3))(pick(strings)).mkString
      val fields = Seq.fill(rnd.nextInt(5)) {
        val value = if (rnd.nextBoolean()) "\"" + text + "\"" else pick(values)
        "\"" + text + "\"" + pick(Seq(":", " : ")) + value
      }
      val doc = fields.mkString("{", pick(Seq(",", ", ")), "}").getBytes(UTF_8)
      withClue(s"seed $seed, ${new String(doc, UTF_8)}: ") {
        assert(JsonSyntax.checkLine(doc, 0, doc.length, members).isRight)
        val spans = members.relativeTo(0)
        assert(members.count == fields.size)
        for (m <- 0 until members.count) {
          val at = m * JsonSyntax.Members.Fields
          val bytes = doc.slice(spans(at + JsonSyntax.Members.KeyStart), spans(at + JsonSyntax.Members.End))
          val expected = if (bytes.exists(_ < 0)) 1 else 0
          assert(spans(at + JsonSyntax.Members.NotAscii) == expected, s"member $m")
        }
      }
    }
  }
}
