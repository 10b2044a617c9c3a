package io.sparkgazette.spark
package source
package state

import io.sparkgazette.message.ProducerState

/** A journal's read-committed state at a batch boundary `offset`: where reading resumes (the end
  * of the last message that ends at or before `offset`) and its producers' states. `revision`
  * and `origin` name the journal's entry into the query (see [[JournalPosition]]): a state an
  * earlier entry left behind, say by an attempt still running when the journal was read afresh,
  * is not this entry's.
  */
private[source] final case class SequencerState(resume: Long, producers: Seq[ProducerState], revision: Long = 0L,
    origin: Long = -1L)
