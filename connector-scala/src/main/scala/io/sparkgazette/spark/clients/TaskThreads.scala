package io.sparkgazette.spark
package clients

import java.util.concurrent.{CountDownLatch, Executors, Future, ThreadFactory, TimeUnit}

/** Threads for what a task runs beside itself (a real-time task's Reads and appends), taken from
  * a pool the executor keeps: a real-time batch starts every task at once, and a thread started
  * anew for each waits on the JVM's lock of all threads, about 13 ms a task with ten at once,
  * while no task reads. Each runs under `name` while it runs.
  */
private[spark] object TaskThreads {
  private val pool = Executors.newCachedThreadPool(new ThreadFactory {
    override def newThread(r: Runnable): Thread = {
      val t = new Thread(r, "gazette-task-idle")
      t.setDaemon(true)
      t
    }
  })

  /** One body running on a pooled thread: interrupted and waited for as a thread of its own would be. */
  final class Running private[TaskThreads] (name: String, body: () => Unit) {
    private val done = new CountDownLatch(1)
    private val future: Future[_] = pool.submit(new Runnable {
      override def run(): Unit = {
        val thread = Thread.currentThread()
        thread.setName(name)
        try body()
        finally {
          thread.setName("gazette-task-idle")
          done.countDown()
        }
      }
    })

    /** Interrupts the body, if it still runs. */
    def interrupt(): Unit = future.cancel(true)

    /** Waits up to `millis` for the body to end. */
    def join(millis: Long): Unit = done.await(millis, TimeUnit.MILLISECONDS)
  }

  /** Runs `body` on a pooled thread named `name`. */
  def start(name: String)(body: => Unit): Running = new Running(name, () => body)
}
