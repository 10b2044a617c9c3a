package io.sparkgazette

import java.io.File
import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/** The shape the design promises (docs/development.md): layers that depend one way, a source and a
  * sink that never use each other, and rooms small enough to read. How small is a reviewer's
  * judgement, not a count: long files and crowded folders are reported, not refused.
  */
class ArchitectureSuite extends AnyFunSuite {
  private lazy val classes = new File(client.Backoff.getClass.getProtectionDomain.getCodeSource.getLocation.toURI)
  private lazy val graph = PackageDependencies.of(classes)
  private def show(g: Map[String, Set[String]]) =
    g.toSeq.sortBy(_._1).map { case (p, uses) => s"  $p -> ${uses.toSeq.sorted.mkString(", ")}" }.mkString("\n")

  test("no package uses a package that uses it back") {
    assert(graph.size > 10, s"read ${graph.size} packages from $classes")
    val cycles = PackageDependencies.cycles(graph)
    assert(
      cycles.isEmpty, s"package cycles: ${cycles.map(_.toSeq.sorted.mkString(" <-> ")).mkString("; ")}\n${show(graph)}")
  }

  test("the layers depend one way: spark -> message -> client, and client on nothing of ours") {
    def uses(p: String) = PackageDependencies.reachable(graph, p) + p
    val below = Seq("io.sparkgazette.client", "io.sparkgazette.message")
    assert(!uses("io.sparkgazette.client").exists(_.startsWith("io.sparkgazette.message")))
    for (p <- below; q <- uses(p)) assert(!q.startsWith("io.sparkgazette.spark"), s"$p reaches $q\n${show(graph)}")
  }

  test("the source and the sink never use each other: they meet only through spark.handoff") {
    val source = "io.sparkgazette.spark.source"
    val sink = "io.sparkgazette.spark.sink"
    def under(root: String)(p: String) = p == root || p.startsWith(root + ".")
    assert(graph.keySet.exists(under(source)) && graph.keySet.exists(under(sink)), show(graph))
    val crossings = for {
      (from, to) <- Seq(source -> sink, sink -> source)
      (p, uses) <- graph.toSeq.sortBy(_._1) if under(from)(p)
      q <- uses.toSeq.sorted if under(to)(q)
    } yield s"$p -> $q"
    assert(crossings.isEmpty, s"source and sink use each other: ${crossings.mkString("; ")}")
  }

  private val sources = Paths.get(sys.props.getOrElse("sparkgazette.root", ".")).resolve("connector-scala/src/main")
  private def walk(p: Path) = Files.walk(p).iterator().asScala.toSeq

  test("main source files over 450 lines are reported for a reviewer to read") {
    val files = walk(sources).filter(p => Files.isRegularFile(p) && p.toString.matches(".*\\.(scala|java)"))
    assert(files.size > 50, s"found ${files.size} sources under $sources")
    val long = files.map(p => p -> Files.readAllLines(p).size).filter(_._2 > 450)
    long.sortBy(-_._2).foreach { case (p, n) => alert(s"long file (> 450 lines): ${sources.relativize(p)}: $n lines") }
  }

  test("folders of sources, tests or docs holding more than 20 files are reported for a reviewer to read") {
    val root = sources.getParent.getParent.getParent
    val built = Set("target", "build", "__pycache__", ".pytest_cache")
    val folders = Seq("connector-scala/src", "python", "tests", "docs").map(root.resolve).filter(Files.isDirectory(_))
      .flatMap(walk).filter(d =>
        Files.isDirectory(d) && !root.relativize(d).iterator().asScala.exists(n =>
          built(n.toString) || n.toString.endsWith(".egg-info")))
    assert(folders.size > 30, s"found ${folders.size} folders under $root")
    val crowded =
      folders.map(d => d -> Files.list(d).iterator().asScala.count(Files.isRegularFile(_))).filter(_._2 > 20)
    crowded.sortBy(-_._2).foreach { case (d, n) =>
      alert(s"crowded folder (> 20 files): ${root.relativize(d)}: $n files")
    }
  }
}
