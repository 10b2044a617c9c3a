package io.sparkgazette.testing

import java.nio.file.{Files, Paths}

import scala.sys.process._

/** One message as the Go judge prints it. `uuid` is empty for a message without one. */
final case class JudgeRecord(journal: String, begin: Long, end: Long, uuid: String, flags: Int, payload: String)

/** Runs `tests/judge/bin/judge`: Gazette's own Publisher and read iterators, the reference
  * the message layer is checked against. `make setup` builds it.
  */
object Judge {
  private val root = Paths.get(sys.props.getOrElse("sparkgazette.root", "."))
  private val binary = root.resolve("tests/judge/bin/judge")

  def scenarios: Seq[String] = run(Seq("scenarios")).linesIterator.filter(_.nonEmpty).toList

  def publishScenario(broker: String, journal: String, scenario: String): Unit =
    run(Seq("publish", "--broker", broker, "--journal", journal, "--scenario", scenario))

  def publishRandom(broker: String, journal: String, seed: Long): Unit =
    run(Seq("publish", "--broker", broker, "--journal", journal, "--random", seed.toString))

  /** `n` purchase events (ndjson) by Gazette's Publisher, in transactions. */
  def publishEvents(broker: String, journal: String, n: Int, seed: Long = 1L): Unit =
    run(Seq("publish", "--broker", broker, "--journal", journal, "--events", n.toString, "--random", seed.toString))

  /** What Gazette's ReadCommittedIter yields, ACKs left out unless `acks`, or with `committed` false
    * everything its ReadUncommittedIter yields, ACKs included; from offset `from`, a message boundary;
    * with `skipMalformed`, passing over messages the framing cannot unmarshal; with `direct`, fetching
    * persisted fragments from the signed URLs the broker hands out (DoNotProxy) instead of through it.
    */
  def read(broker: String, journal: String, committed: Boolean = true, ring: Int = 8192, acks: Boolean = false,
      from: Long = 0L, skipMalformed: Boolean = false, direct: Boolean = false): Seq[JudgeRecord] =
    run(Seq("read", "--broker", broker, "--journal", journal, "--ring", ring.toString, "--offset", from.toString) ++
      (if (skipMalformed) Seq("--skip-malformed") else Nil) ++ (if (direct) Seq("--direct") else Nil) ++
      (if (committed) Seq("--committed") ++ (if (acks) Seq("--acks") else Nil)
       else Seq("--uncommitted", "--acks"))).linesIterator.filter(_.nonEmpty).map { line =>
      val o = Json.parse(line).getAsJsonObject
      JudgeRecord(
        o.get("journal").getAsString,
        o.get("begin").getAsLong,
        o.get("end").getAsLong,
        o.get("uuid").getAsString,
        o.get("flags").getAsInt,
        o.get("payload").getAsString
      )
    }.toSeq

  /** What reading `journal` costs Gazette's reader (default ring): the messages it yields, and
    * every byte it fetched from the brokers, replays included.
    */
  def readCost(broker: String, journal: String, committed: Boolean): (Long, Long) = {
    val Array(messages, _, fetched) = run(Seq("read", "--broker", broker, "--journal", journal, "--count") ++
      (if (committed) Seq("--committed") else Seq("--uncommitted"))).trim.split("\\s+").map(_.toLong)
    (messages, fetched)
  }

  /** A writer of `journal` driven command by command (see tests/judge/script.go): Gazette's own
    * Publisher, interleaved with whatever the test does between commands.
    */
  def script(broker: String, journal: String): JudgeScript = {
    if (!Files.isExecutable(binary)) throw new IllegalStateException(s"$binary is missing: run `make setup`")
    new JudgeScript(
      new java.lang.ProcessBuilder(binary.toString, "script", "--broker", broker, "--journal", journal)
        .redirectError(java.lang.ProcessBuilder.Redirect.INHERIT).start(),
      journal
    )
  }

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

/** A running `judge script`: commands are sent as written; [[sync]] returns once they are appended. */
final class JudgeScript private[testing] (process: java.lang.Process, journal: String) extends AutoCloseable {
  private val in = new java.io.PrintWriter(new java.io.OutputStreamWriter(process.getOutputStream, "UTF-8"), true)
  private val out = new java.io.BufferedReader(new java.io.InputStreamReader(process.getInputStream, "UTF-8"))

  def send(commands: String*): JudgeScript = { commands.foreach(in.println); this }

  def clock(epochMillis: Long): JudgeScript = send(s"clock $epochMillis")
  def commit(producer: Int): JudgeScript = send(s"commit $producer")
  def continue(producer: Int): JudgeScript = send(s"continue $producer")
  def ack(producer: Int): JudgeScript = send(s"ack $producer")
  def rollback(producer: Int, which: Int): JudgeScript = send(s"rollback $producer $which")
  def dup(producer: Int, which: Int): JudgeScript = send(s"dup $producer $which")
  def noUuid(): JudgeScript = send("nouuid")
  def raw(bytes: Array[Byte]): JudgeScript = send("raw " + bytes.map(b => f"${b & 0xff}%02x").mkString)

  /** Waits until every command so far is appended. */
  def sync(): Unit = {
    in.println("sync")
    val line = out.readLine()
    if (line != "ok")
      throw new IllegalStateException(s"judge script of $journal: expected ok, got $line (exit ${exitCode})")
  }

  private def exitCode = if (process.isAlive()) "running" else process.exitValue().toString

  override def close(): Unit = {
    in.close()
    if (!process.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) process.destroyForcibly()
    else if (process.exitValue() != 0)
      throw new IllegalStateException(s"judge script of $journal failed (${process.exitValue()})")
  }
}
