package io.sparkgazette.testing

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
      flags: Int = 0,
      store: String = "file:///"
  ): JournalSpec =
    JournalSpec(
      name = name,
      replication = replication,
      labels = Some(LabelSet(labels.map { case (k, v) => Label(k, v) }.sortBy(l => (l.name, l.value)))),
      fragment = Some(JournalSpec.Fragment(
        length = fragmentLength,
        compressionCodec = codec,
        stores = Seq(store),
        refreshInterval = Some(PbDuration(seconds = 1))
      )),
      flags = flags
    )

  /** Applies `specs` and waits until each journal can be written. */
  def create(client: GazetteClient, specs: JournalSpec*): Unit = client.upsertAndAwait(specs)
}
