package io.sparkgazette.spark
package clients

import java.net.{URL, URLClassLoader}
import java.util.concurrent.atomic.{AtomicBoolean, AtomicReference}
import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, TimeUnit}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/** A body run on a pooled thread behaves as on a thread of its own: interrupted and waited for
  * whenever that happens, and under its starter's context, not that of whichever task made the
  * thread before.
  */
class TaskThreadsSuite extends AnyFunSuite {
  private def await(latch: CountDownLatch): Unit = assert(latch.await(10, TimeUnit.SECONDS), "a body never ran")

  /** Runs `body` on a thread of its own whose context class loader is `loader`, and waits for it. */
  private def on[T](loader: ClassLoader)(body: => T): T = {
    val out = new AtomicReference[Either[Throwable, T]]()
    val t = new Thread(() =>
      out.set(try Right(body)
        catch { case e: Throwable => Left(e) }))
    t.setContextClassLoader(loader)
    t.start()
    t.join(30000)
    out.get.fold(e => throw e, identity)
  }

  private def poolThreads(): Set[Thread] =
    Thread.getAllStackTraces.keySet().asScala.filter(_.getName.startsWith("gazette-")).toSet

  test("a body interrupted before it started is waited for no longer than it runs") {
    // An appender closed as soon as it was made (a task stopped as its batch starts) interrupts its
    // body before the pooled thread has taken it; the wait for it must not run out its timeout.
    (1 to 50).foreach { i =>
      val running = TaskThreads.start(s"gazette-test-$i")(())
      running.interrupt()
      val t0 = System.nanoTime()
      running.join(3000)
      val ms = (System.nanoTime() - t0) / 1000000
      assert(ms < 1000, s"round $i: join waited $ms ms for a body that had ended or would never run")
    }
  }

  test("an interrupt aimed at a body that is ending never reaches the next body on its thread") {
    val leaked = new AtomicBoolean(false)
    (1 to 200).foreach { _ =>
      val first = TaskThreads.start("gazette-test-first")(())
      first.interrupt()
      // Briefly: long enough for its thread to be idle again and take the next body.
      first.join(20)
      val ran = new CountDownLatch(1)
      TaskThreads.start("gazette-test-next") {
        try {
          if (Thread.currentThread().isInterrupted) leaked.set(true)
          Thread.sleep(1)
        } catch { case _: InterruptedException => leaked.set(true) }
        finally ran.countDown()
      }
      await(ran)
    }
    assert(!leaked.get, "a body started interrupted, by an interrupt meant for the body before it")
  }

  test("a body runs with its starter's context class loader, not that of the task that made its thread") {
    // A Spark task runs with its session's class loader (Spark Connect, isolated artifacts); a
    // pooled thread made by one session's task must neither run another's body with that loader
    // or that task's inheritable thread-locals, nor keep the loader from being collected once idle.
    val inherited = new InheritableThreadLocal[String]()
    val first = new URLClassLoader(Array.empty[URL], getClass.getClassLoader)
    val second = new URLClassLoader(Array.empty[URL], getClass.getClassLoader)
    val before = poolThreads()
    val release = new CountDownLatch(1)
    // Bodies started by the first "task" until one runs on a thread it made.
    val made = on(first) {
      inherited.set("first")
      var found: Thread = null
      var n = 0
      while (found == null && n < 1000) {
        n += 1
        val at = new AtomicReference[Thread]()
        val ran = new CountDownLatch(1)
        TaskThreads.start(s"gazette-test-first-$n") { at.set(Thread.currentThread()); ran.countDown(); release.await() }
        await(ran)
        if (!before.contains(at.get)) found = at.get
      }
      found
    }
    assert(made != null, "no body of the first task ran on a thread of its own making")
    release.countDown()
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
    while (made.getName != "gazette-task-idle" && System.nanoTime() < deadline) Thread.sleep(5)
    assert(made.getName == "gazette-task-idle", s"the thread stayed ${made.getName}")
    val idleLoader = made.getContextClassLoader

    // Bodies started by the second "task", each holding its thread, until one runs on that thread.
    val hold = new CountDownLatch(1)
    val seen = new ConcurrentLinkedQueue[(Thread, ClassLoader, String)]()
    try on(second) {
        var n = 0
        while (!seen.asScala.exists(_._1 eq made) && n < 1000) {
          n += 1
          val ran = new CountDownLatch(1)
          TaskThreads.start(s"gazette-test-second-$n") {
            val t = Thread.currentThread()
            seen.add((t, t.getContextClassLoader, inherited.get))
            ran.countDown()
            hold.await()
          }
          await(ran)
        }
      }
    finally hold.countDown()
    val run = seen.asScala.collectFirst { case (t, l, v) if t eq made => (l, v) }
    assert(run.isDefined, "no body of the second task ran on the first task's thread")
    val (loader, value) = run.get
    assert(loader eq second,
      s"a body ran with ${if (loader eq first) "the first task's" else "another"} " +
        "class loader, not its starter's")
    assert(value != "first", "a body saw the inheritable thread-locals of the task that made its thread")
    assert(idleLoader ne first, "an idle pooled thread keeps the class loader of the task that made it")
  }
}
