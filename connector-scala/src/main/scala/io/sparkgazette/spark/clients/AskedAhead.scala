package io.sparkgazette.spark
package clients

import java.util.concurrent.{CompletableFuture, ExecutionException, Executors, ThreadFactory}

/** A call to the brokers made in the background ahead of the moment its answer is needed, for
  * `key`: between two real-time batches no task reads, and what the next batch's planning asks
  * is asked as the batch before ends, beside Spark's own logs, instead of after them.
  *
  * Taking it waits for an answer still coming as planning would wait for its own call: an
  * interrupt (Spark stops a query so) ends the wait, and a failure is the caller's (asking again
  * would wait out a second retry budget). An answer that failed before it was taken is asked
  * again: the outage it met may be over.
  */
private[spark] final class AskedAhead[K, T](maxAgeNanos: Long = Long.MaxValue) {
  private var ahead = Option.empty[(K, Long, CompletableFuture[T])]

  /** Asks `ask` for `key` in the background, in place of anything asked before. */
  def start(key: K)(ask: => T): Unit = synchronized {
    ahead.foreach(_._3.cancel(false))
    ahead = Some((key, System.nanoTime(), CompletableFuture.supplyAsync(() => ask, AskedAhead.pool)))
  }

  /** What was asked ahead for `key`, once, or `ask`'s answer where nothing was, it was for another
    * key, is older than the age allowed (a batch that failed and runs again) or had failed.
    */
  def take(key: K)(ask: => T): T = {
    val taken = synchronized { val a = ahead; ahead = None; a }
    taken.collect { case (`key`, at, f) if System.nanoTime() - at < maxAgeNanos && !f.isCompletedExceptionally => f }
      .fold(ask)(f =>
        try f.get()
        catch { case e: ExecutionException => throw e.getCause })
  }

  /** Forgets what is being asked: a stopped query's answers are no one's. */
  def close(): Unit = synchronized {
    ahead.foreach(_._3.cancel(false))
    ahead = None
  }
}

private object AskedAhead {
  private val pool = Executors.newCachedThreadPool(new ThreadFactory {
    override def newThread(r: Runnable): Thread = {
      val t = new Thread(r, "gazette-asked-ahead")
      t.setDaemon(true)
      t
    }
  })
}
