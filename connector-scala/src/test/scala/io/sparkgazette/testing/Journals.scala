package io.sparkgazette.testing

import io.sparkgazette.client.protocol.{CompressionCodec, JournalSpec}
import io.sparkgazette.client.{GazetteClient, JournalSpecs}

/** Journals as the suites make them ([[JournalSpecs]] with the suites' fragment settings: small
  * fragments in the brokers' file store, listed every second), and waiting until applied journals
  * can be written.
  */
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
    JournalSpecs(
      name, labels, replication, JournalSpecs.Fragment(fragmentLength, codec, Seq(store), refreshSeconds = 1), flags)

  /** Applies `specs` and waits until each journal can be written. */
  def create(client: GazetteClient, specs: JournalSpec*): Unit = client.upsertAndAwait(specs)
}
