package io.sparkgazette.testing

import com.google.protobuf.duration.{Duration => PbDuration}
import io.sparkgazette.client.protocol.{CompressionCodec, JournalSpec}
import io.sparkgazette.client.{GazetteClient, JournalSpecs}

/** Journals as the suites make them ([[JournalSpecs]] with the suites' fragment settings: small
  * fragments in the brokers' file store, listed every second), and waiting until applied journals
  * can be written.
  */
object Journals {

  /** A journal's spec. Its fragments are cut at `fragmentLength` bytes (1 KiB at least), compressed
    * with `codec`, persisted to `store` ([[LocalCluster.storeUrl]]: `file:///` or the cluster's S3
    * server) under the journal's name and the expanded `pathPostfixTemplate` (e.g.
    * `utc_date={{.Spool.FirstAppendTime.Format "2006-01-02"}}`), also every `flushIntervalSeconds`
    * (60 at least; 0: only at the length), and listed from the store every `refreshSeconds`.
    */
  def spec(
      name: String,
      labels: Seq[(String, String)] = Seq("content-type" -> "application/x-ndjson"),
      replication: Int = 1,
      fragmentLength: Long = 1 << 20,
      codec: CompressionCodec = CompressionCodec.SNAPPY,
      flags: Int = 0,
      store: String = "file:///",
      pathPostfixTemplate: String = "",
      flushIntervalSeconds: Long = 0,
      refreshSeconds: Long = 1
  ): JournalSpec = {
    val spec = JournalSpecs(
      name, labels, replication, JournalSpecs.Fragment(fragmentLength, codec, Seq(store), refreshSeconds), flags)
    spec.copy(fragment = spec.fragment.map(_.copy(
        pathPostfixTemplate = pathPostfixTemplate,
        flushInterval = if (flushIntervalSeconds > 0) Some(PbDuration(seconds = flushIntervalSeconds)) else None
      )))
  }

  /** Applies `specs` and waits until each journal can be written. */
  def create(client: GazetteClient, specs: JournalSpec*): Unit = client.upsertAndAwait(specs)
}
