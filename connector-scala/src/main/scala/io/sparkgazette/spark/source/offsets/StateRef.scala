package io.sparkgazette.spark
package source
package offsets

/** Where one saved state is: the file (relative to the store's directory) and the state's key,
  * `(journal, offset, revision, origin)`, with what its file's index says of it (`resume`, and
  * where its `producers` lie in the file), so that a task reads that state alone.
  */
private[source] final case class StateRef(file: String, journal: String, offset: Long, revision: Long, origin: Long,
    resume: Long,
    position: Long, producers: Int)
