package io.sparkgazette.client

import com.google.protobuf.duration.{Duration => PbDuration}
import io.sparkgazette.client.protocol.{CompressionCodec, JournalSpec, Label, LabelSet}

/** Journal specs as gazctl builds them: a name, labels, a replication factor and fragment
  * settings, with gazctl's defaults for what is left out. Labels are sorted, as brokers require.
  */
object JournalSpecs {

  /** How a journal's fragments are cut and persisted: at `length` bytes, compressed with
    * `codec`, into `stores` (none: fragments are never persisted), listed every `refreshSeconds`.
    */
  final case class Fragment(length: Long = 512L << 20, codec: CompressionCodec = CompressionCodec.SNAPPY,
      stores: Seq[String] = Nil, refreshSeconds: Long = 300)

  def apply(name: String, labels: Seq[(String, String)], replication: Int = 1, fragment: Fragment = Fragment(),
      flags: Int = 0): JournalSpec =
    JournalSpec(
      name = name,
      replication = replication,
      labels = Some(LabelSet(labels.map { case (k, v) => Label(k, v) }.sortBy(l => (l.name, l.value)))),
      fragment = Some(JournalSpec.Fragment(
          length = fragment.length,
          compressionCodec = fragment.codec,
          stores = fragment.stores,
          refreshInterval = Some(PbDuration(seconds = fragment.refreshSeconds))
        )),
      flags = flags
    )
}
