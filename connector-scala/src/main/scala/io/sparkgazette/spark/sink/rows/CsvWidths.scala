package io.sparkgazette.spark
package sink
package rows

import java.util.concurrent.ConcurrentHashMap

import io.sparkgazette.client.GazetteClient
import io.sparkgazette.message.{CsvFraming, JournalBytes, MessageIterator}

/** How wide the records of CSV journals are: as wide as each journal's first, which Gazette's
  * readers (Go's encoding/csv) hold every later record to. Known once a journal holds a record;
  * kept per JVM, as every record of a journal has that width.
  */
private[sink] object CsvWidths {
  private val known = new ConcurrentHashMap[(String, String), Integer]()

  /** Fields of `journal`'s first record, its UUID column included; None while it is empty. */
  def apply(client: GazetteClient, journal: String): Option[Int] = {
    val key = (client.config.brokers.mkString(","), journal)
    Option(known.get(key)).map(_.intValue).orElse {
      val width = first(client, journal)
      width.foreach(w => known.put(key, w))
      width
    }
  }

  private def first(client: GazetteClient, journal: String): Option[Int] = {
    val from = client.readableFrom(journal)
    val head = client.writeHead(journal)
    if (from >= head) return None
    val reader = client.read(journal, from, head)
    try {
      val messages = new MessageIterator(
        journal, CsvFraming, reader.map(c => JournalBytes(c.offset, c.content.asReadOnlyByteBuffer())))
      messages.collectFirst { case Right(m) => m.message.bytes }.flatMap(r => CsvFraming.fields(r).toOption).map(_.size)
    } finally reader.close()
  }
}
