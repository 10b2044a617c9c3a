package io.sparkgazette.spark

import io.sparkgazette.spark.options.GazetteOptions
import org.scalatest.funsuite.AnyFunSuite

class ReferenceDocsSuite extends AnyFunSuite {

  test("docs/options.md is the page generated from the options' reference (make options-doc)") {
    assert(
      ReferenceDocs.read(ReferenceDocs.optionsPage) == ReferenceDocs.options,
      "docs/options.md differs from the options reference (options.json): run `make options-doc`"
    )
  }

  test("docs/operations.md lists the error conditions GazetteErrors raises (make options-doc)") {
    val page = ReferenceDocs.read(ReferenceDocs.operationsPage)
    assert(page == ReferenceDocs.withConditions(page),
      "the error conditions in docs/operations.md differ from GazetteErrors.conditions: run `make options-doc`")
  }

  test("every option the source or the sink accepts is documented once per side, and each side parses only those") {
    for ((side, names) <- Seq("source" -> GazetteOptions.sourceNames, "sink" -> GazetteOptions.sinkNames)) {
      assert(names.distinct == names, s"$side option names repeat")
      names.foreach(n => assert(ReferenceDocs.options.contains(s"| `$n` |"), s"$side option $n is not on the page"))
    }
    val docs = GazetteOptions.reference
    assert(docs.map(d => (d.name, d.side)).distinct.size == docs.size, "an option is documented twice for one side")
    assert(docs.forall(d => d.doc.trim.nonEmpty && d.default.trim.nonEmpty))
  }

  test("test hooks and Spark's own options are accepted but not documented") {
    assert(!ReferenceDocs.options.contains(GazetteOptions.TestSinkFault))
    assert(!GazetteOptions.sinkNames.exists(_.startsWith(GazetteOptions.TestPrefix)))
  }
}
