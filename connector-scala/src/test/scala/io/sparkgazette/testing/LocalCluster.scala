package io.sparkgazette.testing

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._
import scala.sys.process._

/** A local Gazette cluster (etcd + brokers on loopback) run by the project's harness,
  * `tests/harness/cluster.py`, so that Scala and Python suites share one way of starting it.
  * The harness tears the cluster down when this JVM exits, however it exits. A cluster started
  * with `store = "s3"` also runs an S3 server for the journals that name it ([[storeUrl]]).
  */
final class LocalCluster private (dir: Path, env: Map[String, String]) extends AutoCloseable {

  /** Every broker's endpoint, in harness order. */
  val brokers: Seq[String] = env("GAZETTE_BROKERS").split(',').toSeq

  /** The first broker's endpoint. */
  def broker: String = brokers.head

  /** The directory the brokers' `file:///` fragment stores map to. */
  val fragmentRoot: String = env("GAZETTE_FRAGMENT_ROOT")

  /** The S3 server's endpoint, `http://127.0.0.1:PORT`, in an `s3` cluster. */
  val s3Endpoint: Option[String] = env.get("GAZETTE_S3_ENDPOINT")

  /** The fragment store for journal specs: `file:///PREFIX` under [[fragmentRoot]], or in an `s3`
    * cluster `s3://gazette/PREFIX?endpoint=...&region=us-east-1` on its S3 server. `prefix` is ""
    * or ends in "/".
    */
  def storeUrl(prefix: String = ""): String = {
    require(prefix.isEmpty || prefix.endsWith("/"), s"a store prefix ends in '/': '$prefix'")
    env.get("GAZETTE_S3_STORE") match {
      case Some(s3) => s3.patch(s3.indexOf('?'), prefix, 0) // s3://gazette/?endpoint=...
      case None => "file:///" + prefix
    }
  }

  def stopBroker(index: Int): Unit = LocalCluster.harness(dir, "stop-broker", index.toString)
  def startBroker(index: Int): Unit = LocalCluster.harness(dir, "start-broker", index.toString)

  /** Kills the S3 server of an `s3` cluster (as a crash), which then refuses connections. */
  def stopStore(): Unit = LocalCluster.harness(dir, "stop-store")

  /** Starts the S3 server again on its port, with the objects it held. */
  def startStore(): Unit = LocalCluster.harness(dir, "start-store")

  override def close(): Unit = LocalCluster.harness(dir, "down")
}

object LocalCluster {
  private val root = Paths.get(sys.props.getOrElse("sparkgazette.root", "."))

  /** Starts `brokers` brokers and applies the journal `specs` (gazctl YAML files, relative to
    * the project root). `store = "s3"` also starts an S3 server for fragments ([[storeUrl]]).
    */
  def start(brokers: Int = 1, specs: Seq[String] = Nil, store: String = "file"): LocalCluster = {
    require(store == "file" || store == "s3", s"store is 'file' or 's3', not '$store'")
    val dir = Files.createTempDirectory("gazette-cluster-state")
    val specArgs = specs.flatMap(s => Seq("--specs", root.resolve(s).toString))
    val owner = ProcessHandle.current().pid().toString
    harness(dir, Seq("up", "--brokers", brokers.toString, "--store", store, "--owner-pid", owner) ++ specArgs: _*)
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
