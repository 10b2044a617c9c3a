package io.sparkgazette.spark
package sink
package realtime

import java.io.ByteArrayOutputStream

import scala.collection.mutable

import com.google.protobuf.ByteString
import io.sparkgazette.client.GazetteClient
import io.sparkgazette.spark.clients.TaskThreads
import io.sparkgazette.spark.sink.metrics.WriterCounts

/** Appends a real-time writer's messages as they come, on a thread of its own: whatever is
  * framed while an append is in flight goes in the next one, so a row waits for at most one
  * append ahead of its own, and appends grow with the rate instead of the rate waiting on them.
  * Each journal's bytes are appended in the order they were framed (one thread, one append in
  * flight), which keeps every producer's clocks in order in the journal.
  *
  * @param limit framed bytes held, over all journals, beyond which [[add]] waits
  */
private[realtime] final class RealTimeAppender(client: GazetteClient, limit: Long, name: String) {
  private val lock = new Object
  private val pending = mutable.LinkedHashMap[String, ByteArrayOutputStream]()
  private var held = 0L
  private var inFlight = false
  private var failure: Throwable = null
  private var closed = false
  // What was appended, and how long writers waited on the appends (the limit, a flush).
  private var appendedBytes = 0L
  private var appends = 0L
  private var waitNanos = 0L

  private val thread = TaskThreads.start(name)(run())

  /** Queues `bytes` (whole messages) for `journal`; rethrows an earlier append's failure. */
  def add(journal: String, bytes: Array[Byte], offset: Int, length: Int): Unit = lock.synchronized {
    if (held >= limit && failure == null) {
      val t0 = System.nanoTime()
      while (held >= limit && failure == null) lock.wait()
      waitNanos += System.nanoTime() - t0
    }
    check()
    pending.getOrElseUpdate(journal, new ByteArrayOutputStream(length max 256)).write(bytes, offset, length)
    held += length
    lock.notifyAll()
  }

  /** Waits until everything queued is appended; rethrows an append's failure. */
  def flush(): Unit = lock.synchronized {
    val t0 = System.nanoTime()
    while ((pending.nonEmpty || inFlight) && failure == null) lock.wait()
    waitNanos += System.nanoTime() - t0
    check()
  }

  /** Counts what was appended so far, and the waits, into `counts`. */
  def countInto(counts: WriterCounts): Unit = lock.synchronized {
    counts.bytesAppended = appendedBytes
    counts.appends = appends
    counts.appendWaitNanos = waitNanos
  }

  /** Stops appending: what is still queued is dropped (a batch run again writes it). */
  def close(): Unit = {
    lock.synchronized {
      closed = true
      pending.clear()
      lock.notifyAll()
    }
    thread.interrupt()
    thread.join(1000)
  }

  private def check(): Unit = {
    if (failure != null) throw failure
    if (closed) throw new IllegalStateException(s"$name is closed")
  }

  private def run(): Unit =
    try {
      var next: Seq[(String, ByteArrayOutputStream)] = Nil
      while (lock.synchronized {
          inFlight = false
          lock.notifyAll()
          while (pending.isEmpty && !closed) lock.wait()
          next = pending.toSeq
          pending.clear()
          inFlight = next.nonEmpty
          !closed
        })
        next.foreach { case (journal, content) =>
          client.append(journal, ByteString.copyFrom(content.toByteArray))
          lock.synchronized {
            held -= content.size()
            appendedBytes += content.size()
            appends += 1
            lock.notifyAll()
          }
        }
    } catch {
      // Whatever stops this thread fails the writer: a flush must never wait for it in vain.
      case e: Throwable =>
        lock.synchronized {
          if (failure == null) failure = if (closed) new IllegalStateException(s"$name is closed") else e
          inFlight = false
          lock.notifyAll()
        }
    }
}
