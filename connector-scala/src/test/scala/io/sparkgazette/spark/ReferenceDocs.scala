package io.sparkgazette.spark

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths}

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.options.OptionsPage

/** The pages generated from the code: `docs/options.md` whole, and the table of error conditions
  * in `docs/operations.md` (between its `<!-- conditions -->` markers). `make options-doc` writes
  * them; [[ReferenceDocsSuite]] fails when the checked-in pages differ.
  */
object ReferenceDocs {
  private val Begin = "<!-- conditions -->"
  private val End = "<!-- /conditions -->"

  def root: Path = Paths.get(sys.props.getOrElse("sparkgazette.root", "."))
  def optionsPage: Path = root.resolve("docs/options.md")
  def operationsPage: Path = root.resolve("docs/operations.md")

  def options: String = OptionsPage.markdown

  def conditions: String =
    ("| condition | meaning |" +: "| --- | --- |" +: GazetteErrors.conditions.map {
      case (name, meaning) =>
        s"| `$name` | $meaning |"
    }).mkString("\n")

  /** `page` with the conditions' table between its markers. */
  def withConditions(page: String): String = {
    val begin = page.indexOf(Begin)
    require(begin >= 0, s"docs/operations.md has no '$Begin' marker where the error conditions go")
    val end = page.indexOf(End, begin) match {
      case -1 => page.indexOf('\n', begin) match { case -1 => page.length; case nl => nl }
      case e => e + End.length
    }
    page.substring(0, begin) + s"$Begin\n$conditions\n$End" + page.substring(end)
  }

  def read(path: Path): String = new String(Files.readAllBytes(path), UTF_8)

  def main(args: Array[String]): Unit = {
    Files.write(optionsPage, options.getBytes(UTF_8))
    Files.write(operationsPage, withConditions(read(operationsPage)).getBytes(UTF_8))
    println(s"wrote $optionsPage and the error conditions of $operationsPage")
  }
}
