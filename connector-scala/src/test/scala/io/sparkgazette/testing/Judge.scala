package io.sparkgazette.testing

import java.nio.file.{Files, Paths}

import scala.sys.process._

import com.google.gson.JsonParser

/** One message as the Go judge prints it. `uuid` is empty for a message without one. */
final case class JudgeRecord(journal: String, begin: Long, end: Long, uuid: String, flags: Int, payload: String)

/** Runs `tests/judge/bin/judge`: Gazette's own Publisher and read iterators, the reference
  * the message layer is checked against. `make setup` builds it.
  */
object Judge {
  private val root = Paths.get(sys.props.getOrElse("sparkgazette.root", "."))
  private val binary = root.resolve("tests/judge/bin/judge")

  def scenarios: Seq[String] = run(Seq("scenarios")).linesIterator.filter(_.nonEmpty).toSeq

  def publishScenario(broker: String, journal: String, scenario: String): Unit =
    run(Seq("publish", "--broker", broker, "--journal", journal, "--scenario", scenario))

  def publishRandom(broker: String, journal: String, seed: Long): Unit =
    run(Seq("publish", "--broker", broker, "--journal", journal, "--random", seed.toString))

  /** What Gazette's ReadCommittedIter yields, ACKs left out, or with `committed` false
    * everything its ReadUncommittedIter yields, ACKs included.
    */
  def read(broker: String, journal: String, committed: Boolean = true, ring: Int = 8192): Seq[JudgeRecord] =
    run(Seq("read", "--broker", broker, "--journal", journal, "--ring", ring.toString) ++
      (if (committed) Seq("--committed") else Seq("--uncommitted", "--acks"))).linesIterator.filter(_.nonEmpty).map { line =>
      val o = JsonParser.parseString(line).getAsJsonObject
      JudgeRecord(o.get("journal").getAsString, o.get("begin").getAsLong, o.get("end").getAsLong,
        o.get("uuid").getAsString, o.get("flags").getAsInt, o.get("payload").getAsString)
    }.toSeq

  /** The journals Gazette's ModuloMapping and RendezvousMapping pick for each key. */
  def map(journals: Seq[String], keys: Seq[String]): Seq[(String, String)] = {
    val input = new java.io.ByteArrayInputStream(keys.mkString("", "\n", "\n").getBytes("UTF-8"))
    run(Seq("map", "--journals", journals.mkString(",")), input).linesIterator.filter(_.nonEmpty).map { l =>
      (l.takeWhile(_ != '\t'), l.dropWhile(_ != '\t').drop(1))
    }.toSeq
  }

  private def run(args: Seq[String], stdin: java.io.InputStream = null): String = {
    if (!Files.isExecutable(binary)) throw new IllegalStateException(s"$binary is missing: run `make setup`")
    val out = new StringBuilder
    val err = new StringBuilder
    val cmd = Process(binary.toString +: args)
    val withInput = if (stdin == null) cmd else cmd #< stdin
    val code = withInput ! ProcessLogger(l => out.append(l).append('\n'), l => err.append(l).append('\n'))
    if (code != 0) throw new IllegalStateException(s"judge ${args.mkString(" ")} failed ($code): $err")
    out.toString
  }
}
