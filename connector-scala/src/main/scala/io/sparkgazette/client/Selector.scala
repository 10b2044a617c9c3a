package io.sparkgazette.client

import io.sparkgazette.client.protocol.{Label, LabelSelector, LabelSet}

/** Gazette's label selectors in their string form (`gazctl -l`), parsed, rendered and matched
  * exactly as Gazette does.
  *
  * {{{
  *   app.gazette.dev/message-type=Event, region in (us,eu), !deprecated, prefix=events/
  * }}}
  *
  * Expressions are comma-separated: `n=v` or `n==v` (include), `n!=v` (exclude), `n in (a,b)`,
  * `n notin (a,b)` or `n not in (a,b)`, `n` (exists) and `!n` (does not exist). A name written
  * `n:prefix` matches values starting with the given value. The meta-label `name` is each
  * journal's name, and `prefix=p/` is short for `name:prefix=p/`.
  */
object Selector {

  /** Parses `text`, failing with [[MalformedSelectorException]] naming the offending character. */
  def parse(text: String): LabelSelector = new Parser(text).selector()

  /** The canonical string form: includes then excludes, one expression per label name. */
  def render(selector: LabelSelector): String = {
    def group(labels: Seq[Label]): Seq[(String, Seq[String])] =
      labels
        .groupBy(l => if (l.prefix) s"${l.name}:prefix" else l.name)
        .toSeq
        .sortBy(_._1)
        .map { case (name, ls) => name -> ls.map(_.value).sorted }

    val include = group(labelsOf(selector.include)).map {
      case (n, Seq("")) => n
      case (n, Seq(v)) => s"$n=$v"
      case (n, vs) => s"$n in (${vs.mkString(",")})"
    }
    val exclude = group(labelsOf(selector.exclude)).map {
      case (n, Seq("")) => s"!$n"
      case (n, Seq(v)) => s"$n!=$v"
      case (n, vs) => s"$n notin (${vs.mkString(",")})"
    }
    (include ++ exclude).mkString(",")
  }

  /** Whether a journal named `journal` with `labels` is selected: no exclude label matches, and
    * every distinct include name matches at least one of its values.
    */
  def matches(selector: LabelSelector, journal: String, labels: LabelSet): Boolean = {
    val set = Label("name", journal) +: labelsOf(Some(labels))
    val include = labelsOf(selector.include).map(normalize)
    val exclude = labelsOf(selector.exclude).map(normalize)
    exclude.forall(l => !matchesOne(l, set)) &&
    include.groupBy(_.name).values.forall(_.exists(matchesOne(_, set)))
  }

  /** A selector of one journal by name. */
  def ofJournal(journal: String): LabelSelector =
    LabelSelector(include = Some(LabelSet(Seq(Label("name", journal)))))

  private def labelsOf(set: Option[LabelSet]): Seq[Label] = set.map(_.labels).getOrElse(Nil)

  // `prefix=p/` is Gazette's shorthand for `name:prefix=p/`.
  private def normalize(l: Label): Label =
    if (l.name == "prefix") Label("name", l.value, prefix = true) else l

  private def matchesOne(sel: Label, set: Seq[Label]): Boolean =
    set.exists { l =>
      l.name == sel.name &&
      (sel.value.isEmpty || (if (sel.prefix) l.value.startsWith(sel.value) else l.value == sel.value))
    }

  private val NameChars = (('a' to 'z') ++ ('A' to 'Z') ++ ('0' to '9') ++ "-_+/.").toSet
  private val ValueChars = NameChars ++ "=%"

  /** A recursive-descent parser that remembers where it is, for error messages. */
  private final class Parser(text: String) {
    private var pos = 0
    private val include = Seq.newBuilder[Label]
    private val exclude = Seq.newBuilder[Label]

    def selector(): LabelSelector = {
      spaces()
      if (!atEnd) {
        expression()
        while ({ spaces(); !atEnd }) {
          expect(",")
          spaces()
          expression()
        }
      }
      def sorted(b: Seq[Label]) = {
        val s = b.sortBy(l => (l.name, l.value, l.prefix))
        if (s.distinct.size != s.size) fail("a label repeated in the selector")
        LabelSet(s)
      }
      LabelSelector(Some(sorted(include.result())), Some(sorted(exclude.result())))
    }

    private def expression(): Unit = {
      if (peek('!')) {
        pos += 1
        val (n, p) = name()
        exclude += Label(n, "", p)
        return
      }
      val (n, p) = name()
      spaces()
      if (take("==") || take("=")) {
        spaces(); include += Label(n, value(), p)
      } else if (take("!=")) {
        spaces(); exclude += Label(n, value(), p)
      } else if (takeWord("in")) {
        values().foreach(v => include += Label(n, v, p))
      } else if (takeWord("notin") || (takeWord("not") && { spaces(); takeWord("in") })) {
        values().foreach(v => exclude += Label(n, v, p))
      } else if (atEnd || peek(',')) {
        include += Label(n, "", p)
      } else {
        fail("'=', '!=', 'in', 'notin', ',' or the end")
      }
    }

    private def name(): (String, Boolean) = {
      val start = pos
      while (!atEnd && NameChars(text(pos))) pos += 1
      if (pos - start < 2) { pos = start; fail("a label name of at least 2 characters [A-Za-z0-9-_+/.]") }
      val n = text.substring(start, pos)
      (n, take(":prefix"))
    }

    private def value(): String = {
      val start = pos
      while (!atEnd && ValueChars(text(pos))) pos += 1
      text.substring(start, pos)
    }

    private def values(): Seq[String] = {
      spaces(); expect("("); spaces()
      val vs = Seq.newBuilder[String]
      vs += value()
      while ({ spaces(); take(",") }) { spaces(); vs += value() }
      expect(")")
      vs.result()
    }

    private def atEnd = pos >= text.length
    private def peek(c: Char) = !atEnd && text(pos) == c
    private def spaces(): Unit = while (peek(' ')) pos += 1
    private def take(s: String): Boolean =
      if (text.startsWith(s, pos)) { pos += s.length; true }
      else false
    private def takeWord(w: String): Boolean =
      if (text.startsWith(w, pos) && (pos + w.length == text.length || !NameChars(text(pos + w.length)))) {
        pos += w.length; true
      } else false
    private def expect(s: String): Unit = if (!take(s)) fail(s"'$s'")
    private def fail(expected: String): Nothing = throw new MalformedSelectorException(text, pos, expected)
  }
}

/** A label selector that does not parse; `position` is the 0-based index of the bad character. */
final class MalformedSelectorException(val selector: String, val position: Int, expected: String)
    extends IllegalArgumentException(
      s"""malformed label selector "$selector" at character ${position + 1}""" +
        (if (position < selector.length) s" ('${selector(position)}')" else " (the end)") +
        s": expected $expected"
    )
