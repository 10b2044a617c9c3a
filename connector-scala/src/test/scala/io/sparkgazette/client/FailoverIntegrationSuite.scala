package io.sparkgazette.client

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.{AtomicBoolean, AtomicInteger, AtomicReference}

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString
import io.sparkgazette.testing.{Journals, LocalCluster}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** Reads and appends of a replicated journal across the stop and restart of its primary. */
class FailoverIntegrationSuite extends AnyFunSuite with BeforeAndAfterAll {
  private var cluster: LocalCluster = _

  override def beforeAll(): Unit = cluster = LocalCluster.start(brokers = 3)
  override def afterAll(): Unit = if (cluster != null) cluster.close()

  test("a tailing reader and a writer keep working while the journal's primary is stopped and restarted") {
    val journal = "itest/failover/replicated"
    // Only the first broker is configured: once it is gone, the client must use the brokers
    // it learned from routes.
    val client = GazetteClient(cluster.broker)
    Journals.create(client, Journals.spec(journal, replication = 2))

    // The writer appends until told to stop, so that it is still writing whenever the test
    // looks, however long the failover takes to be seen.
    val stop = new AtomicBoolean()
    val committed = new ConcurrentLinkedQueue[(Long, ByteString)]()
    val written = new AtomicInteger()
    val failure = new AtomicReference[Throwable]()
    val writer = new Thread(() =>
      try {
        var i = 0
        while (!stop.get()) {
          val content = ByteString.copyFrom(s"""{"seq":$i}""" + "\n", UTF_8)
          committed.add(client.append(journal, content).begin -> content)
          written.incrementAndGet()
          i += 1
          Thread.sleep(2)
        }
      } catch { case e: Throwable => failure.set(e) })

    val delivered = new ConcurrentLinkedQueue[Chunk]()
    val reader = client.read(journal, 0, block = true)
    val tail = new Thread(() =>
      try reader.foreach(delivered.add)
      catch { case e: Throwable => if (!reader.hasNext) () else failure.set(e) })

    writer.setDaemon(true)
    writer.start()
    tail.start()
    def awaitWritten(n: Int): Unit = {
      val deadline = 3.minutes.fromNow
      while (written.get() < n && failure.get() == null && !deadline.isOverdue()) Thread.sleep(20)
      if (written.get() < n) stop.set(true)
      assert(failure.get() == null, String.valueOf(failure.get()))
      assert(written.get() >= n, s"the writer stalled at ${written.get()} messages")
    }

    awaitWritten(300)
    val route = client.list(s"name=$journal").head.getRoute
    val primary = route.members(route.primary).suffix
    val index = primary.stripPrefix("broker-").toInt
    cluster.stopBroker(index)
    val moved = 1.minute.fromNow
    def primaryNow = { val r = client.list(s"name=$journal").head.getRoute; r.members.lift(r.primary).map(_.suffix) }
    while (primaryNow.forall(_ == primary) && !moved.isOverdue()) Thread.sleep(50)
    assert(primaryNow.exists(_ != primary), s"the journal's primary never moved off $primary")
    awaitWritten(written.get() + 300)
    cluster.startBroker(index)
    awaitWritten(written.get() + 300)
    stop.set(true)
    writer.join()
    val messages = written.get()

    val head = client.writeHead(journal)
    val deadline = 1.minute.fromNow
    while (reader.offset < head && !deadline.isOverdue()) Thread.sleep(20)
    reader.close()
    tail.join()
    assert(failure.get() == null, String.valueOf(failure.get()))

    // What the reader delivered is contiguous from 0 to the head: nothing lost, nothing twice.
    val chunks = delivered.asScala.toVector
    chunks.foldLeft(0L) { (expected, c) => assert(c.offset == expected); c.end }
    assert(chunks.last.end == head)
    val streamed = chunks.foldLeft(ByteString.EMPTY)(_ concat _.content)
    val fresh = client.read(journal, 0)
    assert(fresh.foldLeft(ByteString.EMPTY)(_ concat _.content) == streamed)

    // Every acknowledged append sits at its committed offset. An append whose outcome was
    // unknown during the failover may have been retried and written twice (at-least-once).
    committed.asScala.foreach { case (begin, content) =>
      assert(streamed.substring(begin.toInt, begin.toInt + content.size()) == content)
    }
    val seqs = streamed.toString(UTF_8).split('\n').toSeq
    assert(seqs.distinct.size == messages)
    client.close()
  }
}
