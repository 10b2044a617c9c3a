package io.sparkgazette.spark
package handoff

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.TaskContext

/** The journals the running real-time tasks of this JVM read, by task attempt, and which source
  * reads each. A real-time write derives each row's UUID from its origin, which is sound only
  * where the row was made in the task that read its origin, in order (see
  * [[sink.realtime.OriginUuids]]): a row that crossed a shuffle, or came from another source,
  * would share a producer with rows of other tasks. Two sources of one query reading the same
  * journal (a union) give their rows producers of their own.
  *
  * The source publishes ([[register]]) and the sink consumes ([[of]]); neither knows the other.
  */
private[spark] object RealTimeReads {

  /** How the current task reads a journal: by which source (its place within the query's
    * checkpoint, `sources/<id>`, the same in every run wherever the checkpoint is), read committed or not, and the sequence clocks of the messages it emitted last;
    * `source` None where two of the task's sources read it.
    */
  final case class Read(source: Option[String], committed: Boolean, sequenced: SequencedMessages = null)

  private val reads = new ConcurrentHashMap[Long, Map[String, Read]]()

  /** Records that the current task reads `journals` for `source` until it completes. */
  def register(source: String, journals: Seq[String], committed: Boolean, sequenced: SequencedMessages): Unit =
    Option(TaskContext.get()).foreach { task =>
      val id = task.taskAttemptId()
      val mine = journals.map(_ -> Read(Some(source), committed, sequenced)).toMap
      reads.merge(id, mine,
        (a, b) =>
          a ++ b.map { case (j, r) =>
            j -> a.get(j).filter(_.source != r.source).fold(r)(o => Read(None, o.committed && r.committed))
          })
      task.addTaskCompletionListener[Unit](_ => reads.remove(id))
    }

  /** How the current task reads `journal`; None where it does not. */
  def of(journal: String): Option[Read] =
    Option(TaskContext.get()).flatMap(t => Option(reads.get(t.taskAttemptId()))).flatMap(_.get(journal))
}
