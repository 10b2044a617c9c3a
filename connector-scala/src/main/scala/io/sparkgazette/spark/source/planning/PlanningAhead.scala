package io.sparkgazette.spark
package source
package planning

import java.util.concurrent.{CompletableFuture, Executors, ThreadFactory}

import scala.util.Try

/** What planning a real-time batch asks the brokers, asked as the batch before ends: the journals
  * the target names, and the write heads of those the batch starts in. Between two real-time
  * batches no task reads; Spark merges the ending batch's offsets, writes its offset and commit
  * logs and commits the sink, and the answers come back meanwhile instead of after. They are a few
  * milliseconds older than answers asked while planning, which the planning makes no difference
  * for: a journal created meanwhile is found a batch later, a head asked earlier is judged as one.
  */
private[source] final class PlanningAhead(directory: JournalDirectory) {
  import PlanningAhead._

  private var ahead = Option.empty[(Set[String], Long, CompletableFuture[Answers])]

  /** Asks, in the background, for a batch that starts in `journals`. */
  def start(journals: Set[String]): Unit = synchronized {
    ahead = Some((journals, System.nanoTime(), CompletableFuture.supplyAsync(() => ask(journals), pool)))
  }

  private def ask(journals: Set[String]): Answers = {
    val listed = directory.journals()
    Answers(listed, directory.writeHeads(journals.filter(j => listed.get(j).exists(!_.suspended))))
  }

  /** The answers asked ahead for a batch that starts in `journals`, or asked now where none were (a
    * run's first batch, a batch Spark plans again), they were for other journals or are stale (a
    * batch that failed and runs again), or asking failed: asking again fails the planning.
    */
  def answers(journals: Set[String]): Answers = {
    val taken = synchronized { val a = ahead; ahead = None; a }
    taken.collect { case (`journals`, at, f) if System.nanoTime() - at < MaxAgeNanos => f }
      .flatMap(f => Try(f.join()).toOption)
      .getOrElse(ask(journals))
  }
}

private[source] object PlanningAhead {

  /** The journals the target names, and write heads of the journals asked for that are among them
    * and not suspended (a journal with no replica serving reads answers no head).
    */
  final case class Answers(journals: Map[String, JournalInfo], heads: Map[String, Long])

  private val MaxAgeNanos = 5000L * 1000 * 1000

  private val pool = Executors.newCachedThreadPool(new ThreadFactory {
    override def newThread(r: Runnable): Thread = {
      val t = new Thread(r, "gazette-planning-ahead")
      t.setDaemon(true)
      t
    }
  })
}
