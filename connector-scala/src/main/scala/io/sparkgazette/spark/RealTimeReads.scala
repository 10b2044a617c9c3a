package io.sparkgazette.spark

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.TaskContext

/** The journals the running real-time tasks of this JVM read, by task attempt. A real-time write
  * derives each row's UUID from its origin, which is sound only where the row was made in the
  * task that read its origin, in order (see [[sink.realtime.OriginUuids]]): a row that crossed a
  * shuffle, or came from another source, would share a producer with rows of other tasks.
  */
private[spark] object RealTimeReads {
  private final case class Reads(journals: Set[String], committed: Boolean)
  private val reads = new ConcurrentHashMap[Long, Reads]()

  /** Records that the current task reads `journals` until it completes. */
  def register(journals: Seq[String], committed: Boolean): Unit = Option(TaskContext.get()).foreach { task =>
    val id = task.taskAttemptId()
    reads.merge(
      id, Reads(journals.toSet, committed), (a, b) => Reads(a.journals ++ b.journals, a.committed && b.committed))
    task.addTaskCompletionListener[Unit](_ => reads.remove(id))
  }

  /** Whether the current task reads `journal` read committed; None where it reads it not at all. */
  def readCommitted(journal: String): Option[Boolean] =
    Option(TaskContext.get()).flatMap(t => Option(reads.get(t.taskAttemptId()))).filter(_.journals(journal))
      .map(_.committed)
}
