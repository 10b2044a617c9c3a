package io.sparkgazette

import java.io.{BufferedInputStream, DataInputStream, File, FileInputStream}

import scala.collection.mutable

/** Which of the connector's packages each of its packages uses, read from the compiled classes'
  * constant pools. Scala's chained package clauses let a file use its enclosing packages without an
  * import, so the sources' imports would hide exactly the dependencies that matter; the bytecode
  * names every class a class touches.
  */
private[sparkgazette] object PackageDependencies {
  private val Root = "io/sparkgazette/"
  private val Reference = """io/sparkgazette/[A-Za-z0-9_$/]+""".r

  /** package -> the other connector packages its classes refer to, both as dotted names. */
  def of(classes: File): Map[String, Set[String]] = {
    val edges = mutable.Map.empty[String, mutable.Set[String]]
    for (file <- classFiles(new File(classes, Root))) {
      val from = packageOf(classes.toPath.relativize(file.toPath).toString.replace(File.separatorChar, '/'))
      val uses = edges.getOrElseUpdate(from, mutable.Set.empty)
      for (text <- utf8Constants(file); ref <- Reference.findAllIn(text)) {
        val to = packageOf(ref)
        if (to != from) uses += to
      }
    }
    edges.map { case (p, uses) => p -> uses.toSet }.toMap
  }

  /** The cycles of `graph`: each strongly connected component of more than one package. */
  def cycles(graph: Map[String, Set[String]]): Seq[Set[String]] = {
    val nodes = (graph.keySet ++ graph.values.flatten).toSeq.sorted
    val reaches = nodes.map(n => n -> reachable(graph, n)).toMap
    nodes
      .map(n => nodes.filter(m => m == n || (reaches(n)(m) && reaches(m)(n))).toSet)
      .filter(_.size > 1)
      .distinct
  }

  def reachable(graph: Map[String, Set[String]], from: String): Set[String] = {
    val seen = mutable.Set.empty[String]
    val todo = mutable.Stack(graph.getOrElse(from, Set.empty).toSeq: _*)
    while (todo.nonEmpty) {
      val n = todo.pop()
      if (seen.add(n)) todo.pushAll(graph.getOrElse(n, Set.empty))
    }
    seen.toSet
  }

  private def packageOf(classPath: String): String =
    classPath.substring(0, classPath.lastIndexOf('/')).replace('/', '.')

  private def classFiles(dir: File): Seq[File] =
    Option(dir.listFiles()).toSeq.flatten.flatMap { f =>
      if (f.isDirectory) classFiles(f) else if (f.getName.endsWith(".class")) Seq(f) else Nil
    }

  // The class file format's constant pool (JVMS §4.4): only the Utf8 entries hold names.
  private def utf8Constants(file: File): Seq[String] = {
    val in = new DataInputStream(new BufferedInputStream(new FileInputStream(file)))
    try {
      require(in.readInt() == 0xcafebabe, s"$file is not a class file")
      in.readUnsignedShort(); in.readUnsignedShort()
      val count = in.readUnsignedShort()
      val out = Seq.newBuilder[String]
      var i = 1
      while (i < count) {
        in.readUnsignedByte() match {
          case 1 => out += in.readUTF()
          case 7 | 8 | 16 | 19 | 20 => in.skipBytes(2)
          case 15 => in.skipBytes(3)
          case 3 | 4 | 9 | 10 | 11 | 12 | 17 | 18 => in.skipBytes(4)
          case 5 | 6 => in.skipBytes(8); i += 1
          case tag => throw new IllegalStateException(s"$file: constant pool tag $tag at entry $i")
        }
        i += 1
      }
      out.result()
    } finally in.close()
  }
}
