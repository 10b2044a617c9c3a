package io.sparkgazette.message

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8
import java.time.Instant

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite

/** The Publisher's output, read back through framing and Sequencer, commits and rolls back as
  * Gazette's does.
  */
class PublisherSuite extends AnyFunSuite {
  private val Json = new JsonFraming(Framing.DefaultUuidPointer)

  /** In-memory journals that the publisher's drained bytes are appended to. */
  private final class Journals {
    val bytes = mutable.Map[String, Array[Byte]]().withDefaultValue(Array.emptyByteArray)
    def append(journal: String, b: Array[Byte]): Unit = bytes(journal) = bytes(journal) ++ b
    def appendAll(p: Publisher): Unit = p.drain().foreach { case (j, b) => append(j, b) }
    def appendIntents(intents: Seq[AckIntent]): Unit = intents.foreach(i => append(i.journal, i.intent))

    def committed(journal: String, framing: Framing = Json, ring: Int = 8192): Seq[String] = {
      val all = bytes(journal)
      def from(begin: Long, end: Long) = new MessageIterator(journal, framing,
        Iterator(JournalBytes(begin, ByteBuffer.wrap(all, begin.toInt, (end - begin).toInt))))
      new ReadCommitted(
        from(0, all.length), new Sequencer[RawMessage](ringSize = ring), (_, b, e) => from(b, e), OnMalformed.Fail)
        .map(e => new String(e.message.bytes, UTF_8)).toList
    }
  }

  // A frozen wall clock: ticks alone must keep UUIDs ordered.
  private def publisher() =
    new Publisher(clock = new MonotonicClock(), now = () => Instant.parse("2026-01-01T00:00:00Z"))
  private def doc(i: Int) = s"""{"i":$i}""".getBytes(UTF_8)
  private def field(s: String) = """"i":(\d+)""".r.findFirstMatchIn(s).map(_.group(1).toInt).get

  test("committed messages are visible at once, uncommitted ones only after their ACK intents") {
    val p = publisher()
    val j = new Journals
    p.publishCommitted("a", Json, doc(1))
    p.publishUncommitted("a", Json, doc(2))
    p.publishUncommitted("b", Json, doc(3))
    p.publishUncommitted("a", Json, doc(4))
    j.appendAll(p)
    assert(j.committed("a").map(field) == Seq(1))
    assert(j.committed("b").isEmpty)
    val intents = p.buildAckIntents()
    assert(intents.map(_.journal) == Seq("a", "b"))
    j.appendIntents(intents)
    assert(j.committed("a").map(field) == Seq(1, 2, 4))
    assert(j.committed("b").map(field) == Seq(3))
    // A repeated ACK is harmless.
    j.appendIntents(intents)
    assert(j.committed("a").map(field) == Seq(1, 2, 4))
  }

  test("a malformed line inside a replayed transaction is skipped, and counted, once") {
    val p = publisher()
    val j = new Journals
    p.publishUncommitted("a", Json, doc(1))
    j.appendAll(p)
    j.append("a", "not json\n".getBytes(UTF_8))
    p.publishUncommitted("a", Json, doc(2))
    p.publishUncommitted("a", Json, doc(3))
    j.appendAll(p)
    j.appendIntents(p.buildAckIntents())
    val all = j.bytes("a")
    def from(begin: Long, end: Long) = new MessageIterator("a", Json,
      Iterator(JournalBytes(begin, ByteBuffer.wrap(all, begin.toInt, (end - begin).toInt))))
    val skip = new OnMalformed.Skip
    var replays = 0
    val read = new ReadCommitted(from(0, all.length), new Sequencer[RawMessage](ringSize = 1),
      (_, b, e) => { replays += 1; from(b, e) }, skip).map(e => field(new String(e.message.bytes, UTF_8))).toList
    assert(read == Seq(1, 2, 3) && replays > 0, s"read $read with $replays replays")
    assert(skip.messages == 1, s"one malformed line in the journal, counted ${skip.messages} times")
  }

  test("each ACK intent takes its own, larger clock") {
    val p = publisher()
    Seq("a", "b", "c").foreach(j => p.publishUncommitted(j, Json, doc(0)))
    val clocks = p.buildAckIntents().map { i =>
      new MessageIterator(
        i.journal, Json, Iterator(JournalBytes(0, ByteBuffer.wrap(i.intent)))).next().toOption.get.clock
    }
    assert(clocks == clocks.sorted && clocks.distinct.size == 3)
  }

  test("rollback intents discard the open transaction and keep what earlier ACKs committed") {
    val p = publisher()
    val j = new Journals
    p.publishUncommitted("a", Json, doc(1))
    j.appendAll(p)
    j.appendIntents(p.buildAckIntents())
    p.publishUncommitted("a", Json, doc(2)) // written in a journal with an earlier ACK
    p.publishUncommitted("b", Json, doc(3)) // and in one the producer never wrote before
    j.appendAll(p)
    j.appendIntents(p.buildRollbackIntents())
    p.publishUncommitted("a", Json, doc(4))
    p.publishUncommitted("b", Json, doc(5))
    j.appendAll(p)
    j.appendIntents(p.buildAckIntents())
    assert(j.committed("a").map(field) == Seq(1, 4))
    assert(j.committed("b").map(field) == Seq(5))
    assert(j.committed("a", ring = 1).map(field) == Seq(1, 4)) // also when every commit replays
  }

  test("a payload that cannot be framed leaves the buffer with whole messages only") {
    val p = publisher()
    p.publishCommitted("a", Json, doc(1))
    intercept[MessageFormatException](p.publishCommitted("a", Json, "[".getBytes(UTF_8)))
    val j = new Journals
    j.appendAll(p)
    assert(j.committed("a").map(field) == Seq(1))
  }

  test("drained in place, many journals' bytes come out whole and in order, however often each is drained") {
    val p = new Publisher()
    val journals = new Journals
    val names = (0 until 20).map(i => s"j$i")
    val rnd = new scala.util.Random(7)
    val expected = mutable.Map[String, Vector[String]]().withDefaultValue(Vector.empty)
    for (i <- 0 until 4000) {
      val j = names(rnd.nextInt(names.size))
      val doc = s"""{"i":$i,"pad":"${"x" * rnd.nextInt(3000)}"}"""
      p.publishCommitted(j, Json, doc.getBytes(UTF_8))
      expected(j) :+= doc
      if (p.buffered(j) > (16 << 10))
        p.drainTo(j)((b, off, len) => journals.append(j, java.util.Arrays.copyOfRange(b, off, off + len)))
    }
    names.foreach(j =>
      p.drainTo(j)((b, off, len) => journals.append(j, java.util.Arrays.copyOfRange(b, off, off + len))))
    names.foreach { j =>
      assert(p.buffered(j) == 0)
      assert(journals.committed(j).map(_.replaceFirst("""^\{"_meta":\{"uuid":"[^"]+"\},""", "{")) == expected(j), j)
    }
  }

  test("csv and protobuf-fixed acknowledgements commit their journals too") {
    val p = publisher()
    val j = new Journals
    val fixed = new FixedFraming(1)
    p.publishUncommitted("c", CsvFraming, "x,y".getBytes(UTF_8))
    p.publishUncommitted("f", fixed, Array[Byte](0x10, 0x07))
    j.appendAll(p)
    assert(j.committed("c", CsvFraming).isEmpty && j.committed("f", fixed).isEmpty)
    j.appendIntents(p.buildAckIntents())
    assert(j.committed("c", CsvFraming).map(_.split(",", -1).drop(1).toSeq) == Seq(Seq("x", "y")))
    assert(j.committed("f", fixed).size == 1)
  }
}
