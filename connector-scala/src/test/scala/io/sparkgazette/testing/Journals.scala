package io.sparkgazette.testing

import scala.concurrent.duration._

import com.google.protobuf.duration.{Duration => PbDuration}
import io.sparkgazette.client.GazetteClient
import io.sparkgazette.client.protocol.{CompressionCodec, JournalSpec, Label, LabelSet}

/** Journal specs for tests, and waiting until applied journals can be written. */
object Journals {

  def spec(
      name: String,
      labels: Seq[(String, String)] = Seq("content-type" -> "application/x-ndjson"),
      replication: Int = 1,
      fragmentLength: Long = 1 << 20,
      codec: CompressionCodec = CompressionCodec.SNAPPY,
      flags: Int = 0
  ): JournalSpec =
    JournalSpec(
      name = name,
      replication = replication,
      labels = Some(LabelSet(labels.map { case (k, v) => Label(k, v) }.sortBy(l => (l.name, l.value)))),
      fragment = Some(JournalSpec.Fragment(
        length = fragmentLength,
        compressionCodec = codec,
        stores = Seq("file:///"),
        refreshInterval = Some(PbDuration(seconds = 1))
      )),
      flags = flags
    )

  /** Applies `specs` and waits until each journal has a write head, i.e. is assigned to brokers. */
  def create(client: GazetteClient, specs: JournalSpec*): Unit = {
    specs.grouped(64).foreach(group => client.upsert(group: _*)) // etcd caps operations per transaction
    val deadline = 30.seconds.fromNow
    specs.foreach { s =>
      while (client.list(s"name=${s.name}").forall(_.route.forall(r => r.primary < 0 || r.members.size < s.replication))) {
        if (deadline.isOverdue()) throw new IllegalStateException(s"journal ${s.name} was not assigned in time")
        Thread.sleep(50)
      }
      client.writeHead(s.name)
    }
  }
}
