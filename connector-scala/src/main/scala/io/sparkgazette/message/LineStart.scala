package io.sparkgazette.message

/** A journal's bytes from the first line that begins at or after `from`, given its bytes from
  * `from - 1` on: where a reader that starts mid-journal finds its first message, for framings
  * whose messages end at newlines ([[Framing.splitsAtNewlines]]). A line begins at `from` when the
  * byte before it is a newline, so one byte before `from` is enough to tell, and no earlier bytes
  * are needed. (Where the journal jumps over removed bytes, a message begins right after the jump.)
  */
final class LineStart(from: Long, chunks: Iterator[JournalBytes]) extends Iterator[JournalBytes] {
  private var pending: JournalBytes = _

  /** Where the first line begins (-1 until it is found: the bytes seen hold no newline). */
  var start: Long = if (from <= 0) 0L else -1L
  // Where the bytes seen so far end. A chunk past it follows bytes that retention removed, and
  // a message begins at its first byte, as MessageIterator reads it after such a jump.
  private var expected = from - 1

  override def hasNext: Boolean = {
    while (pending == null && chunks.hasNext) {
      val c = chunks.next()
      if (start >= 0) pending = c
      else if (c.offset > expected) { start = c.offset; pending = c }
      else {
        expected = c.offset + c.data.remaining()
        val data = c.data
        // Bytes before `from - 1` (a chunk that began earlier) cannot hold the newline sought.
        var i = data.position() + math.max(0L, from - 1 - c.offset).toInt
        while (i < data.limit() && data.get(i) != '\n') i += 1
        if (i < data.limit()) {
          start = c.offset + (i + 1 - data.position())
          val rest = data.duplicate()
          rest.position(i + 1)
          if (rest.hasRemaining) pending = JournalBytes(start, rest.slice())
        }
      }
    }
    pending != null
  }

  override def next(): JournalBytes = {
    if (!hasNext) throw new NoSuchElementException("no more bytes")
    val c = pending
    pending = null
    c
  }
}
