package io.sparkgazette.spark
package source
package offsets

/** Where a query stands in one journal: `offset` is the next byte to read; `revision` the Etcd
  * revision that created the journal (0 if unknown), so that a journal deleted and created again
  * under the same name is not read at the old one's offsets; `origin` the offset where the query
  * began reading this journal with no producer states (-1 if unknown), from which any later state
  * can be rebuilt.
  */
private[spark] final case class JournalPosition(offset: Long, revision: Long = 0L, origin: Long = -1L)
