package io.sparkgazette.spark
package source
package rows

import java.nio.charset.StandardCharsets.UTF_8

import io.sparkgazette.message.Framing
import io.sparkgazette.testing.{Judge, SparkClusterSuite}
import org.scalatest.funsuite.AnyFunSuite

/** Typed rows over lines Gazette's reader rejects (torn lines that carry a transaction's UUID,
  * text after a JSON value, CSV records of another width): they never count with a UUID they
  * seem to carry. Each expectation is what Gazette's Go reader (the judge) does with the same journal.
  */
class TypedRowsMalformedIntegrationSuite extends AnyFunSuite with SparkClusterSuite with TypedJournals {

  private def write(journal: String, lines: Seq[String]): Seq[Long] = {
    val w = Judge.script(cluster.broker, journal)
    try lines.foreach(l => w.raw((l + "\n").getBytes(UTF_8)))
    finally { w.sync(); w.close() }
    lines.scanLeft(0L)(_ + _.getBytes(UTF_8).length + 1).init
  }

  private def message(e: Throwable): String =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" / ")

  /** Two CONTINUE_TXN messages of one producer, then a line that is not JSON carrying that producer's
    * ACK UUID (e.g. a writer's torn line): Gazette's reader cannot unmarshal the ACK, so it never
    * commits the transaction. UUIDs are Gazette's own Publisher's, taken from a scratch journal.
    */
  private def tornAck(name: String): (String, Seq[Long]) = {
    val scratch = journal(s"$name-scratch")
    val w = Judge.script(cluster.broker, scratch)
    try w.continue(0).continue(0).ack(0).sync()
    finally w.close()
    val uuids = Judge.read(cluster.broker, scratch, committed = false).map(_.uuid)
    assert(uuids.size == 3, uuids)
    val j = journal(name)
    val offsets = write(
      j,
      Seq(
        s"""{"_meta":{"uuid":"${uuids(0)}"},"user":"a","amount":1}""",
        s"""{"_meta":{"uuid":"${uuids(1)}"},"user":"b","amount":2}""",
        s"""{"_meta":{"uuid":"${uuids(2)}"},"user":""" // not JSON: torn after the UUID
      )
    )
    (j, offsets)
  }

  test("a non-JSON line carrying an ACK's UUID fails a typed read committed, as it fails an untyped one") {
    val (j, offsets) = tornAck("review/torn-ack/part-000")
    // Go's reader skipping what it cannot unmarshal commits nothing: the ACK is not a message to it.
    assert(Judge.read(cluster.broker, j, skipMalformed = true).isEmpty)
    // The untyped source fails on the line, naming it.
    val untyped = intercept[Exception](
      spark.read.format("gazette").option("broker", cluster.broker).option("journals", j).load().collect())
    assert(message(untyped).contains(s"journal $j at offset ${offsets(2)}"), message(untyped))
    // Typed (failOnMalformed, the default), the line fails the read too: were the torn line's UUID
    // taken unchecked, the sequencer would take it for the ACK (never parsed) and emit the
    // transaction Go's reader leaves uncommitted.
    val typed = scala.util.Try(reader(j, "user STRING, amount INT").load().select("user").collect().toSeq)
    assert(typed.isFailure, s"the typed read succeeded with rows $typed committed by a torn ACK line")
    assert(message(typed.failed.get).contains(s"journal $j at offset ${offsets(2)}"), message(typed.failed.get))
  }

  test("a non-JSON line carrying an old ACK's UUID must not roll back a transaction Go's reader commits (loss)") {
    val scratch = journal("review/torn-rollback-scratch/part-000")
    val w = Judge.script(cluster.broker, scratch)
    try w.continue(0).ack(0).continue(0).continue(0).ack(0).sync()
    finally w.close()
    val u = Judge.read(cluster.broker, scratch, committed = false).map(_.uuid)
    assert(u.size == 5, u) // c1, A1, c2, c3, A2
    val j = journal("review/torn-rollback/part-000")
    val offsets = write(
      j,
      Seq(
        s"""{"_meta":{"uuid":"${u(0)}"},"user":"a","amount":1}""",
        s"""{"_meta":{"uuid":"${u(1)}"}}""",
        s"""{"_meta":{"uuid":"${u(2)}"},"user":"b","amount":2}""",
        s"""{"_meta":{"uuid":"${u(3)}"},"user":"c","amount":3}""",
        s"""{"_meta":{"uuid":"${u(1)}"},"user":""", // torn line carrying A1's UUID: not JSON
        s"""{"_meta":{"uuid":"${u(4)}"}}"""
      )
    )
    // Go's reader, skipping the line it cannot unmarshal, commits all three messages.
    assert(Judge.read(cluster.broker, j, skipMalformed = true).map(_.begin) == Seq(offsets(0), offsets(2), offsets(3)))
    // So does the typed source skipping malformed messages.
    assert(reader(j, "user STRING, amount INT", "failOnMalformed" -> "false").load().select("user").collect()
      .map(_.getString(0)).toSeq == Seq("a", "b", "c"))
    // Failing on malformed messages (the default), the read must fail or read a, b and c: were the
    // torn line sequenced as a re-appended A1 (a rollback), b and c would vanish without a failure.
    val typed = scala.util.Try(reader(j, "user STRING, amount INT").load().select("user").collect()
        .map(_.getString(0)).toSeq)
    assert(typed.isFailure || typed.get == Seq("a", "b", "c"), s"the typed read lost rows: it read $typed")
  }

  test("PERMISSIVE, a non-JSON line carrying an ACK's UUID commits nothing Go's reader leaves uncommitted") {
    val (j, _) = tornAck("review/torn-ack-permissive/part-000")
    assert(Judge.read(cluster.broker, j, skipMalformed = true).isEmpty)
    // failOnMalformed false skips the line: the transaction stays uncommitted, as Go's reader has it.
    assert(reader(j, "user STRING, amount INT", "failOnMalformed" -> "false").load().select("user").collect().isEmpty)
    // With a corrupt-record column, which messages are committed must not change: a and b are not.
    val permissive = reader(j, "user STRING, amount INT, _corrupt_record STRING").load()
      .select("user").collect().flatMap(r => Option(r.getString(0))).toSeq
    assert(permissive.isEmpty, s"rows of an uncommitted transaction emitted: $permissive")
  }

  test("a line with text after its JSON object is malformed to a typed read, as to Go's reader") {
    val j = journal("review/trailing/part-000")
    val offsets = write(j,
      Seq("""{"user":"a","amount":1}""", """{"user":"b","amount":2} garbage""",
        """{"user":"c","amount":3}"""))
    // Go's reader cannot unmarshal the second line: skipping it, it reads the others.
    assert(Judge.read(cluster.broker, j, skipMalformed = true).map(_.begin) == Seq(offsets(0), offsets(2)))
    // So does the typed source skipping malformed messages (the framing checks the syntax there).
    assert(reader(j, "user STRING, amount INT", "failOnMalformed" -> "false").load().select("user").collect()
      .map(_.getString(0)).toSeq == Seq("a", "c"))
    // Failing on malformed messages (the default), the read fails at the second line: Jackson would
    // stop after the first value, but the framing checks the line first.
    val typed = scala.util.Try(reader(j, "user STRING, amount INT").load().select("user").collect().toSeq)
    assert(typed.isFailure, s"the typed read succeeded with rows $typed")
    assert(message(typed.failed.get).contains(s"journal $j at offset ${offsets(1)}"), message(typed.failed.get))
  }

  test("PERMISSIVE, a CSV record of another width is a corrupt-record row, as docs/source.md says") {
    val j = journal("review/csv-width/part-000", Framing.Csv)
    val offsets = write(j, Seq(",x,1", ",y,2,extra", ",z,3"))
    val got = scala.util.Try(reader(j, "a STRING, n INT, _corrupt_record STRING").load()
        .select("_gazette.begin", "a", "_corrupt_record").collect()
        .map(r => (r.getLong(0), Option(r.getString(1)), Option(r.getString(2)))).toSeq)
    assert(got.isSuccess, got.failed.map(message).getOrElse(""))
    // As Spark's CSV source has it: the corrupt record keeps the fields it could read.
    assert(got.get == Seq((offsets(0), Some("x"), None), (offsets(1), Some("y"), Some(",y,2,extra")),
        (offsets(2), Some("z"), None)), got.get)
  }

  test(
    "PERMISSIVE, a non-JSON line carrying a later committed UUID must not make the producer's next messages duplicates (loss)") {
    val scratch = journal("review/torn-future-scratch/part-000")
    val w = Judge.script(cluster.broker, scratch)
    try w.commit(0).commit(0).commit(0).sync()
    finally w.close()
    val u = Judge.read(cluster.broker, scratch, committed = false).map(_.uuid)
    assert(u.size == 3, u)
    val j = journal("review/torn-future/part-000")
    val offsets = write(
      j,
      Seq(
        s"""{"_meta":{"uuid":"${u(0)}"},"user":"a","amount":1}""",
        s"""{"_meta":{"uuid":"${u(2)}"},"user":""", // torn line carrying the third message's UUID
        s"""{"_meta":{"uuid":"${u(1)}"},"user":"b","amount":2}"""
      )
    )
    // Go's reader, skipping the line it cannot unmarshal, reads a and b.
    assert(Judge.read(cluster.broker, j, skipMalformed = true).map(_.begin) == Seq(offsets(0), offsets(2)))
    assert(reader(j, "user STRING, amount INT", "failOnMalformed" -> "false").load().select("user").collect()
      .map(_.getString(0)).toSeq == Seq("a", "b"))
    // PERMISSIVE: a, the torn line as a corrupt record, and b. Were the torn line sequenced with the
    // UUID it carries, b (an earlier clock of the same producer) would be dropped as a duplicate.
    val got = reader(j, "user STRING, amount INT, _corrupt_record STRING").load()
      .select("_gazette.begin", "user").collect().map(r => (r.getLong(0), Option(r.getString(1)))).toSeq
    assert(got == Seq((offsets(0), Some("a")), (offsets(1), None), (offsets(2), Some("b"))), got)
  }
}
