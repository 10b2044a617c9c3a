package io.sparkgazette.spark
package options

import org.scalatest.funsuite.AnyFunSuite

/** The options page against the declaration it is generated from (that the checked-in page is
  * this one, `ReferenceDocsSuite` checks).
  */
class OptionsPageSuite extends AnyFunSuite {
  test("every option the source or the sink accepts is documented once per side, and each side parses only those") {
    for ((side, names) <- Seq("source" -> GazetteOptions.sourceNames, "sink" -> GazetteOptions.sinkNames)) {
      assert(names.distinct == names, s"$side option names repeat")
      names.foreach(n => assert(OptionsPage.markdown.contains(s"| `$n` |"), s"$side option $n is not on the page"))
    }
    val docs = GazetteOptions.reference
    assert(docs.map(d => (d.name, d.side)).distinct.size == docs.size, "an option is documented twice for one side")
    assert(docs.forall(d => d.doc.trim.nonEmpty && d.default.trim.nonEmpty))
  }

  test("Spark's own options are on the page, apart, and are no option of the connector's sides") {
    val spark = GazetteOptions.sparkAllNames
    assert(spark.contains("asyncProgressTrackingEnabled") && spark.contains("queryName"))
    spark.foreach { n =>
      assert(OptionsPage.markdown.contains(s"| `$n`"), s"Spark's option $n is not on the page")
      assert(!GazetteOptions.allNames.contains(n), s"Spark's option $n is declared as the connector's too")
    }
    assert(GazetteOptions.sparkSourceNames == Seq("queryName"))
  }

  test("test hooks are accepted but not documented") {
    assert(!OptionsPage.markdown.contains(GazetteOptions.TestSinkFault))
    assert(!GazetteOptions.sinkNames.exists(_.startsWith(GazetteOptions.TestPrefix)))
  }
}
