package io.sparkgazette.testing

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._
import scala.sys.process._

/** A local Gazette cluster (etcd + brokers on loopback) run by the project's harness,
  * `tests/harness/cluster.py`, so that Scala and Python suites share one way of starting it.
  * The harness tears the cluster down when this JVM exits, however it exits.
  */
final class LocalCluster private (dir: Path, env: Map[String, String]) extends AutoCloseable {

  /** Every broker's endpoint, in harness order. */
  val brokers: Seq[String] = env("GAZETTE_BROKERS").split(',').toSeq

  /** The first broker's endpoint. */
  def broker: String = brokers.head

  /** The directory the brokers' `file:///` fragment stores map to. */
  val fragmentRoot: String = env("GAZETTE_FRAGMENT_ROOT")

  def stopBroker(index: Int): Unit = LocalCluster.harness(dir, "stop-broker", index.toString)
  def startBroker(index: Int): Unit = LocalCluster.harness(dir, "start-broker", index.toString)

  override def close(): Unit = LocalCluster.harness(dir, "down")
}

object LocalCluster {
  private val root = Paths.get(sys.props.getOrElse("sparkgazette.root", "."))

  /** Starts `brokers` brokers and applies the journal `specs` (gazctl YAML files, relative to
    * the project root).
    */
  def start(brokers: Int = 1, specs: Seq[String] = Nil): LocalCluster = {
    val dir = Files.createTempDirectory("gazette-cluster-state")
    val specArgs = specs.flatMap(s => Seq("--specs", root.resolve(s).toString))
    harness(dir,
      Seq("up", "--brokers", brokers.toString, "--owner-pid", ProcessHandle.current().pid().toString) ++ specArgs: _*)
    val env = Files.readAllLines(dir.resolve("env")).asScala.collect {
      case line if line.contains('=') => line.takeWhile(_ != '=') -> line.dropWhile(_ != '=').drop(1)
    }.toMap
    new LocalCluster(dir, env)
  }

  private def harness(dir: Path, args: String*): Unit = {
    val venv = root.resolve(".venv/bin/python")
    val python = if (Files.isExecutable(venv)) venv.toString else "python3"
    val out = new StringBuilder
    val cmd = Seq(python, root.resolve("tests/harness/cluster.py").toString, "--dir", dir.toString) ++ args
    val code = cmd ! ProcessLogger(l => out.append(l).append('\n'), l => out.append(l).append('\n'))
    if (code != 0) throw new IllegalStateException(s"${cmd.mkString(" ")} failed ($code):\n$out")
  }
}
