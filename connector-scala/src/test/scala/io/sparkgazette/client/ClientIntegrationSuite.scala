package io.sparkgazette.client

import java.net.ServerSocket
import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{ConcurrentLinkedQueue, Executors, TimeUnit}

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._
import scala.util.Random

import com.google.protobuf.ByteString
import io.sparkgazette.client.protocol.{CompressionCodec, JournalSpec, Status}
import io.sparkgazette.testing.{ClusterSuite, Journals}
import org.scalatest.funsuite.AnyFunSuite

/** The client against one real broker. */
class ClientIntegrationSuite extends AnyFunSuite with ClusterSuite {
  private def readAll(c: GazetteClient, journal: String, from: Long = 0): (Seq[Chunk], ByteString) = {
    val reader = c.read(journal, from)
    try {
      val chunks = reader.toVector
      (chunks, chunks.foldLeft(ByteString.EMPTY)((acc, ch) => acc.concat(ch.content)))
    } finally reader.close()
  }

  private def assertContiguous(chunks: Seq[Chunk], from: Long): Unit =
    chunks.foldLeft(from) { (expected, c) =>
      assert(c.offset == expected, s"chunk at ${c.offset}, expected $expected")
      c.end
    }

  test("8 concurrent writers append 10,000 messages to 3 journals; reads return them in commit order") {
    val journals = (1 to 3).map(i => s"itest/writers/part-$i")
    Journals.create(client, journals.map(Journals.spec(_)): _*)

    final case class Commit(journal: String, begin: Long, end: Long, content: ByteString)
    val commits = new ConcurrentLinkedQueue[Commit]()
    val writers = 8
    val perWriter = 10000 / writers
    val pool = Executors.newFixedThreadPool(writers)
    (0 until writers).foreach { w =>
      pool.submit(new Runnable {
        def run(): Unit = {
          val rnd = new Random(w)
          var seq = 0
          while (seq < perWriter) {
            val n = math.min(1 + rnd.nextInt(20), perWriter - seq)
            val lines = (seq until seq + n).map(i => s"""{"writer":$w,"seq":$i,"pad":"${"x" * rnd.nextInt(64)}"}\n""")
            val content = ByteString.copyFrom(lines.mkString, UTF_8)
            val journal = journals(rnd.nextInt(journals.size))
            val commit = client.append(journal, content)
            commits.add(Commit(journal, commit.begin, commit.end, content))
            seq += n
          }
        }
      })
    }
    pool.shutdown()
    assert(pool.awaitTermination(5, TimeUnit.MINUTES))

    val all = commits.asScala.toVector
    var messages = Vector.empty[String]
    journals.foreach { j =>
      val mine = all.filter(_.journal == j).sortBy(_.begin)
      assert(mine.nonEmpty)
      assertContiguous(mine.map(c => Chunk(c.begin, c.content)), 0)
      assert(mine.forall(c => c.end - c.begin == c.content.size()))
      assert(client.writeHead(j) == mine.map(_.content.size().toLong).sum)

      val (chunks, bytes) = readAll(client, j)
      assertContiguous(chunks, 0)
      assert(bytes == mine.foldLeft(ByteString.EMPTY)(_ concat _.content))
      messages ++= bytes.toString(UTF_8).split('\n').toSeq
    }
    val ids = messages.map(m => m.substring(0, m.indexOf(",\"pad\"")))
    assert(ids.size == 10000)
    assert(ids.distinct.size == 10000)
  }

  test("List matches journals by prefix, label values and label absence") {
    Journals.create(
      client,
      Journals.spec("itest/list/orders", Seq("content-type" -> "application/x-ndjson", "topic" -> "orders")),
      Journals.spec(
        "itest/list/payments", Seq("content-type" -> "application/x-ndjson", "topic" -> "payments", "tier" -> "gold")),
      Journals.spec("itest/list/audit", Seq("content-type" -> "text/csv", "topic" -> "audit")),
      Journals.spec("itest/other/orders", Seq("content-type" -> "application/x-ndjson", "topic" -> "orders"))
    )

    def names(selector: String) = client.list(selector).map(_.getSpec.name).sorted
    assert(names("prefix=itest/list/") == Seq("itest/list/audit", "itest/list/orders", "itest/list/payments"))
    assert(names("prefix=itest/, topic in (orders,payments)") ==
      Seq("itest/list/orders", "itest/list/payments", "itest/other/orders"))
    assert(names("prefix=itest/list/, !tier") == Seq("itest/list/audit", "itest/list/orders"))
    assert(names("topic=audit, content-type=text/csv") == Seq("itest/list/audit"))
    assert(names("prefix=itest/list/, topic notin (audit)") == Seq("itest/list/orders", "itest/list/payments"))
    val listed = client.list("prefix=itest/list/")
    assert(
      listed.forall(j => Selector.matches(Selector.parse("prefix=itest/list/"), j.getSpec.name, j.getSpec.getLabels)))
  }

  test("reads starting inside fragments persisted to the file store return the right bytes, for every codec") {
    val direct = new GazetteClient(ClientConfig(Seq(cluster.broker), fragmentRoot = Some(cluster.fragmentRoot)))
    try {
      for (codec <-
          Seq(CompressionCodec.NONE, CompressionCodec.GZIP, CompressionCodec.SNAPPY, CompressionCodec.ZSTANDARD)) {
        val journal = s"itest/persisted/${codec.name.toLowerCase}"
        // The smallest fragment length makes the broker roll, and so persist, almost every append.
        Journals.create(client, Journals.spec(journal, fragmentLength = 1024, codec = codec))
        val rnd = new Random(codec.value)
        val written = (0 until 40).map { i =>
          val content = ByteString.copyFrom((0 until 1 + rnd.nextInt(30))
              .map(k => s"""{"append":$i,"k":$k,"r":${rnd.nextLong()}}""" + "\n").mkString, UTF_8)
          client.append(journal, content)
          content
        }.foldLeft(ByteString.EMPTY)(_ concat _)

        // Wait until the broker's index lists persisted fragments from the store.
        val deadline = 30.seconds.fromNow
        def persisted = client.listFragments(journal).map(_.getSpec).filter(_.modTime != 0)
        while (persisted.size < 3 && !deadline.isOverdue()) Thread.sleep(200)
        val fragments = persisted
        assert(fragments.size >= 3, s"$codec: fragments were not persisted")
        assert(fragments.forall(_.compressionCodec == codec))

        val inside = fragments(1).begin + (fragments(1).end - fragments(1).begin) / 2
        val reader = direct.read(journal, inside)
        val chunks = try reader.toVector
        finally reader.close()
        assertContiguous(chunks, inside)
        assert(chunks.foldLeft(ByteString.EMPTY)(_ concat _.content) == written.substring(inside.toInt), s"$codec")
        assert(reader.fragmentsReadFromStore >= 1, s"$codec: no fragment was read from the store")

        val (_, proxied) = readAll(client, journal, inside)
        assert(proxied == written.substring(inside.toInt), s"$codec via broker")
      }
    } finally direct.close()
  }

  test("a bounded read ends exactly at endOffset; a read from -1 starts at the write head") {
    val journal = "itest/bounded"
    Journals.create(client, Journals.spec(journal))
    client.append(journal, "0123456789".getBytes(UTF_8))
    val reader = client.read(journal, 3, endOffset = 7)
    assert(reader.toVector.map(_.content.toString(UTF_8)).mkString == "3456")
    val tail = client.read(journal, -1)
    assert(!tail.hasNext && tail.offset == 10 && tail.writeHead == 10)
  }

  test("an unknown journal fails with JOURNAL_NOT_FOUND naming it") {
    val read = intercept[BrokerStatusException](client.read("itest/no-such-journal", 0).hasNext)
    assert(read.status == Status.JOURNAL_NOT_FOUND)
    assert(read.getMessage.contains("itest/no-such-journal") && read.getMessage.contains(cluster.broker))
    val append = intercept[BrokerStatusException](client.append("itest/no-such-journal", Array[Byte](1)))
    assert(append.status == Status.JOURNAL_NOT_FOUND &&
      append.getMessage.contains("Append of journal itest/no-such-journal"))
  }

  test("an unreachable broker fails after the retry timeout, naming the endpoint") {
    val port = {
      val s = new ServerSocket(0);
      try s.getLocalPort
      finally s.close()
    }
    val endpoint = s"http://127.0.0.1:$port"
    val dead = new GazetteClient(ClientConfig(Seq(endpoint), retryTimeout = 1.second))
    try {
      val e = intercept[BrokerUnavailableException](dead.writeHead("itest/any"))
      assert(e.getMessage.contains(endpoint) && e.getMessage.contains("itest/any"))
      val r = intercept[BrokerUnavailableException](dead.read("itest/any", 5).hasNext)
      assert(r.getMessage.contains(endpoint) && r.getMessage.contains("offset 5"))
    } finally dead.close()
  }

  test("a malformed selector fails before any RPC, naming the position") {
    val e = intercept[MalformedSelectorException](client.list("prefix=itest/, topic in (a,"))
    assert(e.getMessage.contains("character 28 (the end)"))
  }

  test("appending to a read-only journal fails with NOT_ALLOWED naming the journal") {
    val journal = "itest/read-only"
    Journals.create(client, Journals.spec(journal, flags = JournalSpec.Flag.O_RDONLY.value))
    val e = intercept[BrokerStatusException](client.append(journal, "x\n".getBytes(UTF_8)))
    assert(e.status == Status.NOT_ALLOWED)
    assert(e.getMessage.contains(s"Append of journal $journal") && e.getMessage.contains("read-only"))
  }
}
