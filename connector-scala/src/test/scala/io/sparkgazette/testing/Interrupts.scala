package io.sparkgazette.testing

import java.util.concurrent.atomic.AtomicReference

/** How soon a blocking call ends once its thread is interrupted, as Spark interrupts the threads
  * of a query it stops.
  */
object Interrupts {

  /** Runs `body` on a thread of its own, interrupts the thread `afterMs` later, and gives how many
    * milliseconds `body` took to end after the interrupt (waiting `waitMs` at most) and what it
    * returned or threw (null: it had not ended).
    */
  def interrupted(body: => Any, afterMs: Long = 300, waitMs: Long = 10000): (Long, Any) = {
    val ended = new AtomicReference[Any]()
    val thread = new Thread(() =>
      ended.set(
        try body
        catch { case t: Throwable => t }))
    thread.start()
    Thread.sleep(afterMs)
    val t0 = System.nanoTime()
    thread.interrupt()
    thread.join(waitMs)
    ((System.nanoTime() - t0) / 1000000, ended.get)
  }
}
