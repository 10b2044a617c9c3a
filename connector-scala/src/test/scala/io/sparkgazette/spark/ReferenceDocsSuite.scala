package io.sparkgazette.spark

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
}
