package io.sparkgazette.message

import java.nio.charset.StandardCharsets.UTF_8

import io.sparkgazette.testing.{ClusterSuite, Journals, Judge, JudgeRecord}
import org.scalatest.funsuite.AnyFunSuite

/** The message layer against Gazette itself, over a real broker: journals written by Gazette's
  * Publisher read through our framings and Sequencer yield exactly what Gazette's
  * ReadCommittedIter yields; journals written by our Publisher read through Gazette's show each
  * committed message once; and our mappings pick Gazette's journals.
  */
class InteropIntegrationSuite extends AnyFunSuite with ClusterSuite {
  private val Seeds = sys.env.get("INTEROP_SEEDS").map(_.toInt).getOrElse(200)
  private val Framings = Seq(Framing.JsonLines, Framing.Csv, Framing.ProtobufFixed)

  private def short(contentType: String) = contentType match {
    case Framing.JsonLines => "ndjson"
    case Framing.Csv => "csv"
    case _ => "fixed"
  }

  private def create(names: Seq[(String, String)]): Unit =
    Journals.create(client, names.map { case (n, ct) => Journals.spec(n, labels = Seq("content-type" -> ct)) }: _*)

  private def messages(journal: String, framing: Framing, begin: Long, end: Long) = {
    val reader = client.read(journal, begin, endOffset = end)
    new MessageIterator(journal, framing, reader.map(c => JournalBytes(c.offset, c.content.asReadOnlyByteBuffer())))
  }

  /** Our read of `journal`: framings, MessageIterator and Sequencer, with a small ring so that
    * long transactions are committed by replaying from the broker.
    */
  private def ours(journal: String, contentType: String, committed: Boolean = true, ring: Int = 16)
      : Seq[JudgeRecord] = {
    val framing = Framing.forContentType(contentType).toOption.get
    val all = messages(journal, framing, 0, 0)
    val read =
      if (committed) new ReadCommitted(
        all, new Sequencer[RawMessage](ringSize = ring), (j, b, e) => messages(j, framing, b, e), OnMalformed.Fail)
      else ReadUncommitted(all, OnMalformed.Fail)
    read.map { e =>
      val uuid = if (e.message.uuid == Uuid.Zero) "" else e.message.uuid.toString
      JudgeRecord(
        journal, e.begin, e.end, uuid, if (e.clock == 0) 0 else e.flags, payload(contentType, e.message.bytes))
    }.toList
  }

  // The judge's rendering of a payload: the JSON line, the CSV fields after the UUID, or hex.
  private def payload(contentType: String, b: Array[Byte]): String = contentType match {
    case Framing.JsonLines => new String(b, UTF_8)
    case Framing.Csv => CsvFraming.fields(b).toOption.get.drop(1).mkString(",")
    case _ => b.map(x => f"${x & 0xff}%02x").mkString
  }

  private def assertSame(journal: String, contentType: String, committed: Boolean = true): Int = {
    val go = Judge.read(cluster.broker, journal, committed)
    val scala = ours(journal, contentType, committed)
    assert(go.nonEmpty, s"$journal: the judge read nothing")
    if (scala != go) {
      val firstDiff = scala.zipAll(go, null, null).indexWhere { case (a, b) => a != b }
      fail(s"$journal: ${scala.size} messages vs Go's ${go.size}; first difference at #$firstDiff:\n" +
        s"  ours: ${scala.lift(firstDiff)}\n  go:   ${go.lift(firstDiff)}")
    }
    go.size
  }

  test("every named scenario, in every framing, reads as Gazette's ReadCommittedIter reads it") {
    val scenarios = Judge.scenarios
    assert(scenarios.toSet == Set("committed", "uncommitted-acks", "rollback", "duplicates", "many-producers",
      "long-txn", "mixed"))
    val journals = for (s <- scenarios; ct <- Framings) yield (s"interop/scenario/$s-${short(ct)}", ct)
    create(journals)
    for ((journal, ct) <- journals) {
      Judge.publishScenario(cluster.broker, journal, journal.split('/').last.stripSuffix(s"-${short(ct)}"))
      assertSame(journal, ct)
      assertSame(journal, ct, committed = false)
    }
  }

  test(s"$Seeds random interleavings read as Gazette's ReadCommittedIter reads them") {
    val journals = (0 until Seeds).map(seed => (f"interop/random/$seed%04d", Framings(seed % Framings.size)))
    create(journals)
    var total = 0
    for (((journal, ct), seed) <- journals.zipWithIndex) {
      Judge.publishRandom(cluster.broker, journal, seed.toLong)
      total += assertSame(journal, ct)
    }
    info(s"$total committed messages compared over $Seeds seeds")
  }

  test("journals written by our Publisher read through Gazette's ReadCommittedIter show each committed message once") {
    val journals = Framings.map(ct => (s"interop/published/${short(ct)}", ct))
    create(journals)
    for ((journal, ct) <- journals) {
      val framing = Framing.forContentType(ct).toOption.get
      def payloadOf(i: Int): Array[Byte] = ct match {
        case Framing.JsonLines => s"""{"i":$i}""".getBytes(UTF_8)
        case Framing.Csv => s"$i,row".getBytes(UTF_8)
        case _ => Array[Byte](0x10, i.toByte) // field 2 varint
      }
      val p = new Publisher()
      val expected = scala.collection.mutable.ArrayBuffer[Int]()
      def flush(): Unit = p.drain().foreach { case (j, b) => client.append(j, b) }
      def ack(intents: Seq[AckIntent]): Unit = intents.foreach(i => client.append(i.journal, i.intent))

      (0 until 3).foreach { i => p.publishCommitted(journal, framing, payloadOf(i)); expected += i }
      (3 until 8).foreach { i => p.publishUncommitted(journal, framing, payloadOf(i)); expected += i }
      flush()
      val committedAcks = p.buildAckIntents()
      ack(committedAcks)
      (8 until 12).foreach(i => p.publishUncommitted(journal, framing, payloadOf(i))) // rolled back
      flush()
      ack(p.buildRollbackIntents())
      (12 until 15).foreach { i => p.publishUncommitted(journal, framing, payloadOf(i)); expected += i }
      flush()
      ack(p.buildAckIntents())
      ack(committedAcks) // a stale ACK re-appended: harmless, nothing later is re-committed
      (15 until 17).foreach(i => p.publishUncommitted(journal, framing, payloadOf(i))) // never acknowledged
      flush()

      val go = Judge.read(cluster.broker, journal)
      val seen = go.map(r =>
        ct match {
          case Framing.JsonLines => """"i":(\d+)""".r.findFirstMatchIn(r.payload).get.group(1).toInt
          case Framing.Csv => r.payload.takeWhile(_ != ',').toInt
          case _ => Integer.parseInt(r.payload.substring(2, 4), 16)
        })
      assert(seen == expected, s"$journal as read by Gazette")
      assert(go.forall(r => Uuid.producer(Uuid.parse(r.uuid).get) == p.producer))
      assert(ours(journal, ct) == go)
    }
  }

  test("modulo and rendezvous pick the journal Gazette picks, for 10,000 keys and several journal lists") {
    val rnd = new scala.util.Random(7)
    val keys = (0 until 10000).map(i =>
      if (i % 2 == 0) s"user-$i" else rnd.alphanumeric.take(1 + rnd.nextInt(30)).mkString)
    for (n <- Seq(1, 2, 3, 7, 16)) {
      val journals = (0 until n).map(i => f"topic/part-$i%03d")
      val go = Judge.map(journals, keys)
      val modulo = Mapping.Modulo(journals)
      val rendezvous = Mapping.Rendezvous(journals)
      val ourPicks = keys.map(k => (modulo.journalFor(k.getBytes(UTF_8)), rendezvous.journalFor(k.getBytes(UTF_8))))
      assert(ourPicks == go, s"$n journals")
    }
  }
}
