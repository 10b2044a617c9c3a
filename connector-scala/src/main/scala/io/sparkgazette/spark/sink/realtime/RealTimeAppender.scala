package io.sparkgazette.spark
package sink
package realtime

import java.io.ByteArrayOutputStream

import scala.collection.mutable

import com.google.protobuf.ByteString
import io.sparkgazette.client.GazetteClient

/** Appends a real-time writer's messages as they come, on a thread of its own: whatever is
  * framed while an append is in flight goes in the next one, so a row waits for at most one
  * append ahead of its own, and appends grow with the rate instead of the rate waiting on them.
  * Each journal's bytes are appended in the order they were framed (one thread, one append in
  * flight), which keeps every producer's clocks in order in the journal.
  *
  * @param limit framed bytes held, over all journals, beyond which [[add]] waits
  */
private[spark] final class RealTimeAppender(client: GazetteClient, limit: Long, name: String) {
  private val lock = new Object
  private val pending = mutable.LinkedHashMap[String, ByteArrayOutputStream]()
  private var held = 0L
  private var inFlight = false
  private var failure: Throwable = null
  private var closed = false

  private val thread = new Thread(() => run(), name)
  thread.setDaemon(true)
  thread.start()

  /** Queues `bytes` (whole messages) for `journal`; rethrows an earlier append's failure. */
  def add(journal: String, bytes: Array[Byte], offset: Int, length: Int): Unit = lock.synchronized {
    while (held >= limit && failure == null) lock.wait()
    check()
    pending.getOrElseUpdate(journal, new ByteArrayOutputStream(length max 256)).write(bytes, offset, length)
    held += length
    lock.notifyAll()
  }

  /** Waits until everything queued is appended; rethrows an append's failure. */
  def flush(): Unit = lock.synchronized {
    while ((pending.nonEmpty || inFlight) && failure == null) lock.wait()
    check()
  }

  def close(): Unit = {
    lock.synchronized { closed = true; lock.notifyAll() }
    thread.join(1000)
  }

  private def check(): Unit = if (failure != null) throw failure

  private def run(): Unit = {
    var next: Seq[(String, ByteArrayOutputStream)] = Nil
    while (lock.synchronized {
        inFlight = false
        lock.notifyAll()
        while (pending.isEmpty && !closed) lock.wait()
        next = pending.toSeq
        pending.clear()
        inFlight = next.nonEmpty
        !closed || next.nonEmpty
      }) {
      try
        next.foreach { case (journal, bytes) =>
          client.append(journal, ByteString.copyFrom(bytes.toByteArray))
          lock.synchronized { held -= bytes.size(); lock.notifyAll() }
        }
      catch {
        case e: Throwable =>
          lock.synchronized { failure = e; inFlight = false; lock.notifyAll() }
          return
      }
    }
  }
}
