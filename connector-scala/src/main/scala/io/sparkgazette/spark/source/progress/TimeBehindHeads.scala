package io.sparkgazette.spark
package source
package progress

import java.util.concurrent.{ConcurrentHashMap, Executors, Future, ThreadFactory, TimeUnit}

import scala.util.control.NonFatal

import io.sparkgazette.client.GazetteClient
import io.sparkgazette.message.Framing
import org.slf4j.LoggerFactory

/** The driver's view of how far behind their heads, in time, the journals a query reads are
  * ([[JournalLag]] journal by journal), at a bounded cost per trigger: a journal at its head costs
  * nothing; one behind costs a look at its first unread message once per offset it stands at
  * (the answer is kept until it moves); looks go out `parallelism` at a time, a micro-batch's as
  * soon as its ends are planned (they run while the batch does), and a trigger waits for them at
  * most `budgetMs`: one that takes longer (a broker slow to answer) finishes in the background,
  * for the next trigger, and its journal's time is unknown until then.
  */
private[source] final class TimeBehindHeads(client: GazetteClient, framing: String => Option[Framing],
    budgetMs: Long = TimeBehindHeads.BudgetMs, parallelism: Int = TimeBehindHeads.Parallelism)
    extends AutoCloseable {
  import TimeBehindHeads._

  private val pool = Executors.newFixedThreadPool(parallelism,
    new ThreadFactory {
      override def newThread(r: Runnable): Thread = {
        val t = new Thread(r, "gazette-time-behind")
        t.setDaemon(true)
        t
      }
    })
  // Per journal: the offset looked at, when its first message there was written (None: unknown),
  // and when the look ended.
  private val found = new ConcurrentHashMap[String, Found]()
  private val looking = new ConcurrentHashMap[String, Future[_]]()

  /** Each journal's milliseconds behind its head at `nowMillis` (None: unknown), for the journals
    * with both an offset in `consumed` and a head in `heads`.
    */
  def apply(consumed: Map[String, Long], heads: Map[String, Long], nowMillis: Long): Map[String, Option[Long]] = {
    val journals = consumed.keySet.intersect(heads.keySet)
    found.keySet().removeIf(j => !journals.contains(j))
    prefetch(consumed, heads, nowMillis)
    val deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(budgetMs)
    journals.foreach { j =>
      val f = looking.get(j)
      if (f != null)
        try f.get(math.max(0L, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
        catch { case NonFatal(_) => } // still looking: unknown this trigger
    }
    journals.toSeq.map { j =>
      j ->
        (if (consumed(j) >= heads(j)) Some(0L)
         else Option(found.get(j)).filter(_.offset == consumed(j)).flatMap(_.writtenBy)
           .map(JournalLag.ageMs(nowMillis, _)))
    }.toMap
  }

  /** Starts looking at the journals of `offsets` behind their `heads` whose time at that offset
    * is not known, without waiting: a micro-batch's planned ends are looked at while it runs.
    */
  def prefetch(offsets: Map[String, Long], heads: Map[String, Long],
      nowMillis: Long = System.currentTimeMillis()): Unit =
    offsets.foreach { case (j, o) =>
      val known = found.get(j)
      val fresh = known != null && known.offset == o &&
        (known.writtenBy.isDefined || nowMillis - known.at < UnknownRetryMs)
      if (heads.get(j).exists(o < _) && !fresh)
        looking.computeIfAbsent(j, _ => pool.submit(new Runnable { override def run(): Unit = look(j, o, heads(j)) }))
    }

  private def look(journal: String, offset: Long, head: Long): Unit =
    try {
      val writtenBy =
        try JournalLag.writtenBy(client, journal, framing(journal), offset, head)
        catch {
          case e: InterruptedException => throw e
          case NonFatal(e) =>
            log.debug(s"journal $journal: no time behind its head at offset $offset: ${e.getMessage}")
            None
        }
      found.put(journal, Found(offset, writtenBy, System.currentTimeMillis()))
    } finally looking.remove(journal)

  override def close(): Unit = pool.shutdownNow()
}

private[source] object TimeBehindHeads {
  private val log = LoggerFactory.getLogger(classOf[TimeBehindHeads])

  /** How long a trigger waits for the looks it started. */
  val BudgetMs: Long = 2000L

  /** Looks in flight at once. */
  val Parallelism: Int = 32

  /** How long an unknown time is kept before its journal is looked at again at the same offset
    * (a fragment persisted since, a broker back).
    */
  val UnknownRetryMs: Long = 30000L

  private final case class Found(offset: Long, writtenBy: Option[Long], at: Long)

  /** The time-behind metrics of a trigger, from each journal's milliseconds behind (None:
    * unknown): least, average and most over the journals whose time is known (absent when none
    * is), and how many journals' time is unknown.
    */
  def metrics(behind: Map[String, Option[Long]]): Map[String, String] = {
    val known = behind.values.flatten
    Map(JournalsTimeUnknown -> behind.values.count(_.isEmpty).toString) ++
      (if (known.isEmpty) Map.empty
       else Map(
         MinTimeBehind -> known.min.toString,
         AvgTimeBehind -> math.round(known.map(_.toDouble).sum / known.size).toString,
         MaxTimeBehind -> known.max.toString
       ))
  }

  val MinTimeBehind = "minTimeBehindHeadMs"
  val AvgTimeBehind = "avgTimeBehindHeadMs"
  val MaxTimeBehind = "maxTimeBehindHeadMs"
  val JournalsTimeUnknown = "journalsTimeBehindUnknown"
}
