package io.sparkgazette.client

import io.sparkgazette.client.protocol.{Label, LabelSet}
import org.scalatest.funsuite.AnyFunSuite

class SelectorSuite extends AnyFunSuite {

  private def labels(kv: (String, String)*) =
    LabelSet(kv.map { case (k, v) => Label(k, v) }.sortBy(l => (l.name, l.value)))

  test("every expression form parses into include and exclude labels") {
    val s = Selector.parse("aa=1, bb==2,cc!=3, dd in (x,y), ee notin (p), ff not in (q,r), gg, !hh, name:prefix=ev/")
    assert(s.getInclude.labels == Seq(
      Label("aa", "1"), Label("bb", "2"), Label("dd", "x"), Label("dd", "y"), Label("gg", ""),
      Label("name", "ev/", prefix = true)))
    assert(s.getExclude.labels == Seq(
      Label("cc", "3"), Label("ee", "p"), Label("ff", "q"), Label("ff", "r"), Label("hh", "")))
  }

  test("rendering is canonical and parses back to the same selector") {
    val text = "ff not in (r,q), !hh, aa==1, dd in (y,x), name:prefix=ev/, gg"
    val rendered = Selector.render(Selector.parse(text))
    assert(rendered == "aa=1,dd in (x,y),gg,name:prefix=ev/,ff notin (q,r),!hh")
    assert(Selector.parse(rendered) == Selector.parse(text))
  }

  test("the empty selector matches everything") {
    assert(Selector.render(Selector.parse("")) == "")
    assert(Selector.matches(Selector.parse(" "), "any/journal", labels()))
  }

  test("values of one name are OR-ed, names are AND-ed, excludes veto") {
    val s = Selector.parse("topic in (a,b), region=eu, !deprecated")
    assert(Selector.matches(s, "j/1", labels("topic" -> "a", "region" -> "eu")))
    assert(Selector.matches(s, "j/1", labels("topic" -> "b", "region" -> "eu")))
    assert(!Selector.matches(s, "j/1", labels("topic" -> "c", "region" -> "eu")))
    assert(!Selector.matches(s, "j/1", labels("topic" -> "a")))
    assert(!Selector.matches(s, "j/1", labels("topic" -> "a", "region" -> "eu", "deprecated" -> "")))
    assert(!Selector.matches(s, "j/1", labels("topic" -> "a", "region" -> "eu", "deprecated" -> "yes")))
  }

  test("existence, exclusion of a value, and prefixes of names and values") {
    assert(Selector.matches(Selector.parse("owner"), "j", labels("owner" -> "x")))
    assert(!Selector.matches(Selector.parse("owner"), "j", labels()))
    assert(Selector.matches(Selector.parse("owner!=x"), "j", labels("owner" -> "y")))
    assert(!Selector.matches(Selector.parse("owner!=x"), "j", labels("owner" -> "x")))
    assert(Selector.matches(Selector.parse("prefix=events/"), "events/part-1", labels()))
    assert(!Selector.matches(Selector.parse("prefix=events/"), "rollups/part-1", labels()))
    assert(Selector.matches(Selector.parse("name=events/part-1"), "events/part-1", labels()))
    assert(Selector.matches(Selector.parse("tier:prefix=gold"), "j", labels("tier" -> "gold-eu")))
    assert(!Selector.matches(Selector.parse("tier:prefix=gold"), "j", labels("tier" -> "silver")))
  }

  test("a malformed selector names the character that is wrong") {
    def error(text: String) = intercept[MalformedSelectorException](Selector.parse(text))
    val unclosed = error("aa in (x,y")
    assert(unclosed.position == 10)
    assert(unclosed.getMessage.contains("at character 11 (the end): expected ')'"))
    val badOp = error("topic=a, region ~ eu")
    assert(badOp.position == 16)
    assert(badOp.getMessage.contains("('~')"))
    assert(error("aa=1,,bb=2").position == 5)
    assert(error("x=1").getMessage.contains("a label name of at least 2 characters"))
    assert(error("ab=c d").position == 5)
    assert(error("ab=1, ab=1").getMessage.contains("repeated"))
  }
}
