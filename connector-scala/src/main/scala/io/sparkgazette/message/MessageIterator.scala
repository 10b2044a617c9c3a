package io.sparkgazette.message

import java.nio.ByteBuffer
import java.util.UUID

/** Bytes of a journal beginning at `offset`: what a journal read delivers. */
final case class JournalBytes(offset: Long, data: ByteBuffer)

/** A message's bytes as stored in the journal, without framing, and the UUID found in it
  * ([[Uuid.Zero]] when it has none). An ndjson framing asked to (see [[JsonFraming]]) says where
  * the members of a message that is a JSON object lie in `members`: three ints per member, the
  * index of its key's opening quote, of the byte after its closing quote, and of the comma or
  * brace after its value; null when it did not look.
  */
final class RawMessage(val bytes: Array[Byte], val uuid: UUID, val members: Array[Int] = null) {
  override def toString: String = s"RawMessage(${bytes.length} bytes, $uuid)"
}

/** Splits a journal's bytes into messages with `framing`: each is either an [[Envelope]] of a
  * [[RawMessage]] with the byte offsets it occupies, or a [[MalformedMessage]] covering the
  * bytes skipped to resume at the next message.
  *
  * `chunks` must be contiguous except where the journal itself jumps forward (a removed
  * fragment); bytes left unfinished before a jump are reported as malformed.
  *
  * When the chunks end inside a message, it is reported as truncated; with `holdTail` it is
  * held instead (see [[holdsPartial]]): a reader of a journal's first bytes up to some offset
  * leaves a message that is still being written, or that begins before the offset and ends
  * after it, to whoever reads on.
  *
  * Bytes that hold no complete message within `maxMessageBytes` (an unterminated CSV quote, a
  * line that never ends) are judged as if the journal ended there: reported as malformed, with
  * reading resumed where the framing can find the next message, instead of being held forever.
  *
  * Without `payloads`, messages come with their UUIDs and offsets but no bytes: for readers that
  * need only those. Without `validate`, the framing may take a malformed message for a message (an
  * ndjson line's JSON syntax is not checked beyond its UUID): for readers whose result only
  * matters where another read of the same bytes, failing on malformed messages, succeeds. With
  * `malformedAsMessages`, what the framing finds malformed comes as a message without a UUID
  * (outside any transaction), its bytes without their line end: for readers that hand it on to be
  * judged (a corrupt record), never sequenced by a UUID it may seem to carry.
  *
  * `writtenUntil`: the journal's bytes before this offset were written before the read began and
  * the reader takes them all (a read up to an offset seen before), so asking for them never waits
  * on an append and a framing may take more before it looks (see [[Unpacker.unpack]]); a read that
  * follows appends leaves it at its default.
  */
final class MessageIterator(journal: String, framing: Framing, chunks: Iterator[JournalBytes],
    holdTail: Boolean = false,
    maxMessageBytes: Int = Int.MaxValue,
    payloads: Boolean = true,
    validate: Boolean = true,
    malformedAsMessages: Boolean = false,
    writtenUntil: Long = Long.MinValue)
    extends Iterator[Either[MalformedMessage, Envelope[RawMessage]]] {

  private val unpacker = framing.newUnpacker(validate)
  private var buf = new Array[Byte](64 * 1024)
  private var pos = 0
  private var lim = 0
  private var at = -1L // journal offset of buf(pos)
  private var atEnd = false
  private var held: JournalBytes = _ // a chunk past an offset jump, appended once the gap is reported
  // A chunk past an offset jump while bytes before it are buffered: they are looked at as all there
  // is before the jump (a framing waiting for more contiguous bytes would wait in vain), and what
  // remains of them is reported truncated.
  private var beyond: JournalBytes = _
  // Bytes buffered when the unpacker last asked for more. An unpacker that parses a message from
  // its start is asked again only once they have doubled, so a message that spans many chunks (or
  // never ends) is parsed in linear time, or once a newline came, where a record can end: a
  // reader waiting on a live journal must not hold a message whose last bytes it has.
  private var needed = 0
  private var newline = false
  private var ready: Either[MalformedMessage, Envelope[RawMessage]] = _

  /** The offset just past the last message or malformed range returned (-1 before any bytes). */
  def offset: Long = at

  /** Whether bytes of an unfinished message are held, waiting for more chunks. */
  def holdsPartial: Boolean = pos < lim

  override def hasNext: Boolean = ready != null || advance()

  override def next(): Either[MalformedMessage, Envelope[RawMessage]] = {
    if (!hasNext) throw new NoSuchElementException(s"no more messages in $journal")
    val r = ready
    ready = null
    r
  }

  private def advance(): Boolean = {
    while (ready == null) {
      if (held != null) { val c = held; held = null; append(c) }
      else if (pos < lim && (atEnd || beyond != null || lim - pos >= 2 * needed || unpacker.resumes || newline)) {
        newline = false
        val moreReady = !atEnd && beyond == null && at + (lim - pos) < writtenUntil
        val unpacked = unpacker.unpack(buf, pos, lim, atEnd && !holdTail, moreReady) match {
          case Unpacked.NeedMore if lim - pos >= maxMessageBytes =>
            // Looked at first, if the framing only waited for more: the bytes may hold a message.
            val looked = if (moreReady) unpacker.unpack(buf, pos, lim, atEnd && !holdTail, false) else Unpacked.NeedMore
            if (looked != Unpacked.NeedMore) looked
            else unpacker.unpack(buf, pos, lim, atEnd = true, moreReady = false) match {
              case Unpacked.Malformed(n, reason) =>
                Unpacked.Malformed(n, s"no message ends within $maxMessageBytes bytes: $reason")
              case other => other
            }
          case other => other
        }
        unpacked match {
          case Unpacked.NeedMore =>
            if (atEnd) return false // held: the message's last bytes are not here
            if (beyond != null) jumpOver()
            else { needed = lim - pos; fill() }
          case Unpacked.Skip(n) => consume(n)
          case Unpacked.Malformed(n, _) if malformedAsMessages =>
            var end = pos + n
            if (end > pos && buf(end - 1) == '\n') end -= 1
            if (end > pos && buf(end - 1) == '\r') end -= 1
            val bytes = if (payloads) java.util.Arrays.copyOfRange(buf, pos, end) else Array.emptyByteArray
            ready = Right(Envelope(journal, at, at + n, Uuid.producer(Uuid.Zero), Uuid.clock(Uuid.Zero),
                Uuid.flags(Uuid.Zero), new RawMessage(bytes, Uuid.Zero)))
            consume(n)
          case Unpacked.Malformed(n, reason) =>
            ready = Left(MalformedMessage(journal, at, at + n, reason))
            consume(n)
          case Unpacked.Message(n, from, until, uuid, members) =>
            val bytes = if (payloads) java.util.Arrays.copyOfRange(buf, from, until) else Array.emptyByteArray
            ready = Right(Envelope(journal, at, at + n, Uuid.producer(uuid), Uuid.clock(uuid), Uuid.flags(uuid),
                new RawMessage(bytes, uuid, if (payloads) members else null)))
            consume(n)
        }
      } else if (beyond != null) { at = beyond.offset; append(beyond); beyond = null }
      else if (atEnd) return false
      else fill()
    }
    true
  }

  private def jumpOver(): Unit = {
    val expected = at + (lim - pos)
    ready = Left(MalformedMessage(journal, at, expected,
        s"truncated message: the journal jumps from offset $expected to ${beyond.offset}"))
    pos = 0; lim = 0; at = beyond.offset; needed = 0
    unpacker.restart()
    held = beyond
    beyond = null
  }

  private def consume(n: Int): Unit = { pos += n; at += n; needed = 0; newline = false }

  private def fill(): Unit = {
    if (!chunks.hasNext) { atEnd = true; return }
    val c = chunks.next()
    if (at == -1L) at = c.offset
    val expected = at + (lim - pos)
    if (c.offset == expected) append(c)
    else if (c.offset < expected)
      throw new IllegalStateException(
        s"journal $journal: bytes at offset ${c.offset} overlap those read through $expected")
    else if (pos < lim) beyond = c
    else {
      at = c.offset
      append(c)
    }
  }

  private def append(c: JournalBytes): Unit = {
    val data = c.data.duplicate()
    val n = data.remaining()
    if (pos > 0) {
      System.arraycopy(buf, pos, buf, 0, lim - pos)
      lim -= pos; pos = 0
    }
    if (lim + n > buf.length) buf = java.util.Arrays.copyOf(buf, math.max(buf.length * 2, lim + n))
    data.get(buf, lim, n)
    if (needed > 0 && !unpacker.resumes && !newline) newline = ByteScan.indexOf(buf, lim, lim + n, '\n') < lim + n
    lim += n
  }
}
