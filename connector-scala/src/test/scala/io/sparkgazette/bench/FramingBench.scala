package io.sparkgazette.bench

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8

import io.sparkgazette.message.{
  Flags, Framing, JournalBytes, JsonFraming, MessageIterator, ProducerId, RawMessage, Sequencer, StateTransfer, Uuid
}

/** The message layer alone, in memory: ndjson (or CSV) messages shaped as bench_source.py writes them
  * (4 interleaved producers, transactions of 10), framed by [[MessageIterator]] from chunks of 128 KiB as a
  * Read delivers them, then also sequenced, or instead taken into a [[StateTransfer]] without their
  * bytes (the first pass over the pieces of a range split read committed), against finding each line's end alone (the
  * least any ndjson reader does) in the same run. Where a source task's CPU goes below the
  * client and Spark's rows, measured without either.
  *
  *   connector/Test/runMain io.sparkgazette.bench.FramingBench [MIB] [MESSAGE_BYTES] [ROUNDS] [ndjson|csv]
  */
object FramingBench {
  private val Chunk = 128 * 1024

  def main(args: Array[String]): Unit = {
    val mib = args.headOption.map(_.toInt).getOrElse(64)
    val size = args.lift(1).map(_.toInt).getOrElse(1024)
    val rounds = args.lift(2).map(_.toInt).getOrElse(8)
    val csv = args.lift(3).contains("csv")
    val journal = messages(mib.toLong << 20, size, csv)
    val chunks = journal.grouped(Chunk).zipWithIndex.map { case (c, i) =>
      JournalBytes(i.toLong * Chunk, ByteBuffer.wrap(c))
    }.toVector
    val framing = Framing.forContentType(if (csv) Framing.Csv else Framing.JsonLines, "/_meta/uuid").fold(
      p => throw new IllegalStateException(p), identity)

    def lines(): Long = {
      var n = 0L
      for (c <- chunks) {
        val b = c.data.array()
        var i = 0
        while (i < b.length) { if (b(i) == '\n') n += 1; i += 1 }
      }
      n
    }
    // As a source task frames a range: its bytes written before it is read; typed rows also find
    // where each message's members lie.
    def framed(): Long =
      new MessageIterator("bench", framing, chunks.iterator, writtenUntil = Long.MaxValue).count(_.isRight).toLong
    val withMembers = new JsonFraming("/_meta/uuid", withMembers = true)
    def typed(written: Boolean): Long =
      new MessageIterator(
        "bench", withMembers, chunks.iterator, writtenUntil = if (written) Long.MaxValue else Long.MinValue)
        .count(_.isRight).toLong
    def sequenced(): Long = {
      val s = new Sequencer[RawMessage](Map("bench" -> 0L), Nil, 8192, Long.MaxValue, _.bytes.length.toLong)
      var n = 0L
      new MessageIterator("bench", framing, chunks.iterator, writtenUntil = Long.MaxValue).foreach {
        case Right(env) => s.queue(env); while (s.step().isDefined) n += 1
        case Left(m) => throw new IllegalStateException(m.describe)
      }
      n
    }

    def transferred(): Long = {
      val t = new StateTransfer()
      var n = 0L
      new MessageIterator("bench", framing, chunks.iterator, payloads = false, validate = false).foreach {
        case Right(env) => t.add(env); n += 1
        case Left(m) => throw new IllegalStateException(m.describe)
      }
      n
    }

    // The fastest of `rounds`, after as many untimed ones for the JIT.
    def best(what: () => Long): (Double, Long) = {
      var result = 0L
      for (_ <- 1 to rounds) result = what()
      val times = (1 to rounds).map { _ =>
        val t = System.nanoTime(); result = what(); (System.nanoTime() - t) / 1e9
      }
      (times.min, result)
    }
    val bytes = journal.length.toDouble
    val (reference, count) = best(() => lines())
    println(f"$mib MiB of $size-byte ${if (csv) "CSV" else "ndjson"} messages, $count lines, fastest of $rounds rounds")
    println(
      f"  newline count alone     ${bytes / reference / (1 << 20)}%8.0f MiB/s  ${reference * 1e9 / bytes}%.3f ns/byte")
    // A real-time task follows appends: it cannot wait for more bytes before it looks.
    val typedRow =
      if (csv) Nil
      else Seq("framed with members" -> (() => typed(true)), "... following appends" -> (() => typed(false)))
    for ((name, run) <- Seq("framed" -> (() => framed())) ++ typedRow ++ Seq("framed+sequenced" -> (() => sequenced()),
        "first pass (transfer)" -> (() => transferred()))) {
      val (t, n) = best(run)
      println(f"  $name%-22s  ${bytes / t / (1 << 20)}%8.0f MiB/s  ${t * 1e9 / bytes}%.3f ns/byte  ($n messages)")
      println(f"ratio $name / newline count: ${reference / t}%.2f (throughput, >1 is faster)")
    }
  }

  // As bench_source.py writes them: message i from producer i % 4, every producer's 11th its ACK.
  private def messages(total: Long, size: Int, csv: Boolean): Array[Byte] = {
    val out = new java.io.ByteArrayOutputStream(total.toInt + size)
    val clocks = Array.fill(4)(0x1ef0000000000000L)
    var i = 0
    while (out.size() < total) {
      val p = i % 4
      clocks(p) += 16
      val flags = if ((i / 4) % 11 == 10) Flags.AckTxn else Flags.ContinueTxn
      val uuid = Uuid.build(ProducerId(0x010000000000L + p), clocks(p), flags)
      val line =
        if (csv) { val head = s"$uuid,user-${i % 97},"; s"$head${"x" * math.max(0, size - head.length - 1)}\n" }
        else {
          val head = s"""{"_meta":{"uuid":"$uuid"},"user":"user-${i % 97}","pad":""""
          s"""$head${"x" * math.max(0, size - head.length - 3)}"}\n"""
        }
      out.write(line.getBytes(UTF_8))
      i += 1
    }
    out.toByteArray
  }
}
