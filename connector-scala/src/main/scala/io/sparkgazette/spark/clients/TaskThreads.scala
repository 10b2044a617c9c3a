package io.sparkgazette.spark
package clients

import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.{CountDownLatch, Executors, Future, ThreadFactory, TimeUnit}

/** Threads for what a task runs beside itself (a real-time task's Reads and appends), taken from
  * a pool the executor keeps: a real-time batch starts every task at once, and a thread started
  * anew for each waits on the JVM's lock of all threads, about 13 ms a task with ten at once,
  * while no task reads. Each runs under `name` and its starter's context class loader while it runs.
  */
private[spark] object TaskThreads {
  private val IdleName = "gazette-task-idle"
  private val ownLoader = getClass.getClassLoader

  // Made without the inheritable thread-locals and with the connector's class loader, not those of
  // the task that happens to need a thread first: an idle thread holds nothing of any task's.
  private val pool = Executors.newCachedThreadPool(new ThreadFactory {
    override def newThread(r: Runnable): Thread = {
      val t = new Thread(null, r, IdleName, 0L, false)
      t.setDaemon(true)
      t.setContextClassLoader(ownLoader)
      t
    }
  })

  /** One body running on a pooled thread: interrupted and waited for as a thread of its own would be. */
  final class Running private[TaskThreads] (name: String, body: () => Unit) {
    private val done = new CountDownLatch(1)
    // Taken by whichever comes first: the pooled thread, to run the body, or an interrupt before
    // it has (the body then never runs, and nothing waits for it).
    private val taken = new AtomicBoolean(false)
    private val loader = Thread.currentThread().getContextClassLoader
    private val future: Future[_] = pool.submit(new Runnable {
      override def run(): Unit = if (taken.compareAndSet(false, true)) {
        val thread = Thread.currentThread()
        thread.setName(name)
        thread.setContextClassLoader(loader)
        try body()
        finally {
          thread.setContextClassLoader(ownLoader)
          thread.setName(IdleName)
          done.countDown()
        }
      }
    })

    /** Interrupts the body, if it still runs; one not started yet never runs. */
    def interrupt(): Unit = {
      if (taken.compareAndSet(false, true)) done.countDown()
      future.cancel(true)
    }

    /** Waits up to `millis` for the body to end. */
    def join(millis: Long): Unit = done.await(millis, TimeUnit.MILLISECONDS)
  }

  /** Runs `body` on a pooled thread named `name`. */
  def start(name: String)(body: => Unit): Running = new Running(name, () => body)
}
