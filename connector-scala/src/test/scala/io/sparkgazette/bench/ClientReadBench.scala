package io.sparkgazette.bench

import java.lang.management.ManagementFactory

import scala.sys.process._

import io.sparkgazette.client.GazetteClient

/** The client's raw read against Gazette's Go `RetryReader` (the judge's `read --raw`), rounds
  * alternating on the same journal: the throughput and CPU of the gRPC read path alone, below
  * framing, sequencing and Spark's rows. Run by tests/bench/bench_client.py, which writes the
  * journal.
  *
  *   ClientReadBench BROKER JOURNAL BYTES ROUNDS JUDGE
  */
object ClientReadBench {
  private val os = ManagementFactory.getOperatingSystemMXBean.asInstanceOf[com.sun.management.OperatingSystemMXBean]
  private val threads = ManagementFactory.getThreadMXBean.asInstanceOf[com.sun.management.ThreadMXBean]

  // Bytes every live thread allocated so far: the read's threads are gRPC's and this one.
  private def allocated(): Long = threads.getThreadAllocatedBytes(threads.getAllThreadIds).filter(_ > 0).sum

  def main(args: Array[String]): Unit = args match {
    case Array(broker, journal, size, rounds, judge) => run(broker, journal, size.toLong, rounds.toInt, judge)
    case _ => throw new IllegalArgumentException("usage: ClientReadBench BROKER JOURNAL BYTES ROUNDS JUDGE")
  }

  private def run(broker: String, journal: String, bytes: Long, rounds: Int, judge: String): Unit = {
    val client = GazetteClient(broker)
    try {
      var allocatedPerByte = Double.NaN
      // (seconds, CPU seconds) of one read of the whole journal.
      def jvm(): (Double, Double) = {
        val before = allocated()
        val (cpu, t) = (os.getProcessCpuTime, System.nanoTime())
        val reader = client.read(journal, 0, 0, block = false)
        var read = 0L
        try reader.foreach(c => read += c.content.size())
        finally reader.close()
        if (read != bytes) throw new IllegalStateException(s"read $read of $bytes bytes")
        val took = ((System.nanoTime() - t) / 1e9, (os.getProcessCpuTime - cpu) / 1e9)
        allocatedPerByte = (allocated() - before).toDouble / bytes
        took
      }
      def go(): (Double, Double) = {
        val t = System.nanoTime()
        val err = new StringBuilder
        // bash's `time` prints the Go reader's user and system CPU seconds on stderr.
        val out = Seq("bash", "-c", """TIMEFORMAT="cpu %U %S"; time "$0" read --broker "$1" --journal "$2" --raw""",
          judge, broker, journal).!!(ProcessLogger(_ => (), l => err.append(l).append('\n')))
        val took = (System.nanoTime() - t) / 1e9
        if (out.trim.toLong != bytes) throw new IllegalStateException(s"Go read ${out.trim} of $bytes bytes")
        val cpu = err.toString.linesIterator.collectFirst {
          case l if l.startsWith("cpu ") => l.split(' ').tail.map(_.toDouble).sum
        }
        (took, cpu.getOrElse(throw new IllegalStateException(s"no CPU time from bash's time: $err")))
      }
      jvm() // the JIT compiles the read path first
      val runs = (0 until rounds).map(_ => (jvm(), go()))
      val gib = bytes.toDouble / (1L << 30)
      runs.zipWithIndex.foreach { case (((jt, jc), (gt, gc)), i) =>
        println(f"  round $i: client ${bytes / jt / (1 << 20)}%7.1f MiB/s, ${jc / gib}%5.2f CPU s/GiB;" +
          f" Go ${bytes / gt / (1 << 20)}%7.1f MiB/s, ${gc / gib}%5.2f CPU s/GiB")
      }
      val (jBest, gBest) = (runs.map(_._1._1).min, runs.map(_._2._1).min)
      println(
        f"ratio client raw read / Go raw read: ${gBest / jBest}%.2f (throughput, fastest of ${rounds} each, >1 is faster)")
      println(
        f"ratio Go CPU / client CPU per byte: ${runs.map(_._2._2).sum / runs.map(_._1._2).sum}%.2f (>1: the client spends less)")
      // Responses are parsed without copying their content: about one byte allocated per byte read.
      println(f"client bytes allocated per byte read: $allocatedPerByte%.2f (last round)")
    } finally client.close()
  }

}
