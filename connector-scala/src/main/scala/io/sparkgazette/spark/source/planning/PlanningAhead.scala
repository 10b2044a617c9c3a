package io.sparkgazette.spark
package source
package planning

import io.sparkgazette.spark.clients.AskedAhead

/** What planning a real-time batch asks the brokers, asked as the batch before ends (see
  * [[AskedAhead]]): the journals the target names, and the write heads of those the batch starts
  * in. The answers are a few milliseconds older than answers asked while planning, which makes no
  * difference to the planning: a journal created meanwhile is found a batch later, a head asked
  * earlier is judged as one.
  */
private[source] final class PlanningAhead(directory: JournalDirectory) extends AutoCloseable {
  import PlanningAhead._

  private val ahead = new AskedAhead[Set[String], Answers](MaxAgeNanos)

  /** Asks, in the background, for a batch that starts in `journals`. */
  def start(journals: Set[String]): Unit = ahead.start(journals)(ask(journals))

  /** The answers for a batch that starts in `journals`: asked ahead, or now. */
  def answers(journals: Set[String]): Answers = ahead.take(journals)(ask(journals))

  override def close(): Unit = ahead.close()

  private def ask(journals: Set[String]): Answers = {
    val listed = directory.journals()
    Answers(listed, directory.writeHeads(journals.filter(j => listed.get(j).exists(!_.suspended))))
  }
}

private[source] object PlanningAhead {

  /** The journals the target names, and write heads of the journals asked for that are among them
    * and not suspended (a journal with no replica serving reads answers no head).
    */
  final case class Answers(journals: Map[String, JournalInfo], heads: Map[String, Long])

  // Between two batches of a run, milliseconds pass: older answers are of a batch run again.
  private val MaxAgeNanos = 5000L * 1000 * 1000
}
