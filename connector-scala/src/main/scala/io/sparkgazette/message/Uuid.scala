package io.sparkgazette.message

import java.security.SecureRandom
import java.util.UUID

/** A producer's identity: the 6-byte node field of its message UUIDs, held in the low 48 bits. */
final case class ProducerId(value: Long) extends AnyVal {
  // Twelve hex digits; not String.format, which costs more than reading the message.
  override def toString: String = {
    val hex = java.lang.Long.toHexString(value)
    if (hex.length >= 12) hex else "000000000000".substring(hex.length) + hex
  }
}

object ProducerId {
  private val entropy = new SecureRandom()

  /** A random ProducerId with the multicast bit set, as Gazette draws them: never a real MAC. */
  def random(): ProducerId = {
    val bytes = new Array[Byte](6)
    entropy.nextBytes(bytes)
    bytes(0) = (bytes(0) | 0x01).toByte
    ProducerId(bytes.foldLeft(0L)((acc, b) => (acc << 8) | (b & 0xff)))
  }
}

/** Transaction flags of a message, the low 10 bits of its UUID's clock-sequence field. */
object Flags {

  /** Not part of a transaction: committed as soon as it is read. */
  val OutsideTxn: Int = 0x0

  /** Part of an open transaction: visible once an ACK_TXN with a larger or equal clock is read. */
  val ContinueTxn: Int = 0x1

  /** Commits the producer's CONTINUE_TXN messages with smaller clocks; rolls back those with larger. */
  val AckTxn: Int = 0x2

  val Max: Int = 0x3ff
}

/** Gazette's message UUIDs: RFC 4122 version 1 UUIDs whose timestamp and sequence bits carry a
  * [[Clock]], whose node carries the [[ProducerId]], and whose low 10 clock-sequence bits carry
  * [[Flags]].
  */
object Uuid {

  /** The UUID for `producer`, `clock` and `flags`, bit for bit as Gazette builds it. */
  def build(producer: ProducerId, clock: Long, flags: Int): UUID = {
    require(flags >= 0 && flags <= Flags.Max, s"flags $flags exceed 10 bits")
    val t = clock >>> 4
    val msb = ((t & 0xffffffffL) << 32) | (((t >>> 32) & 0xffffL) << 16) | ((t >>> 48) & 0x0fffL) | 0x1000L
    val lsb = ((0x8000L | ((clock & 0xfL) << 10) | flags) << 48) | (producer.value & 0xffffffffffffL)
    new UUID(msb, lsb)
  }

  def clock(uuid: UUID): Long = {
    val msb = uuid.getMostSignificantBits
    val t = ((msb >>> 32) & 0xffffffffL) | (((msb >>> 16) & 0xffffL) << 32) | ((msb & 0x0fffL) << 48)
    (t << 4) | ((uuid.getLeastSignificantBits >>> 58) & 0xfL)
  }

  def flags(uuid: UUID): Int = ((uuid.getLeastSignificantBits >>> 48) & Flags.Max).toInt

  def producer(uuid: UUID): ProducerId = ProducerId(uuid.getLeastSignificantBits & 0xffffffffffffL)

  /** The zero UUID opts a message out of exactly-once processing. */
  val Zero: UUID = new UUID(0L, 0L)

  /** Parses the forms Gazette's UUID library accepts: canonical `8-4-4-4-12` (any case), with
    * `urn:uuid:` or braces around it, or 32 hex digits. None for anything else.
    */
  def parse(text: String): Option[UUID] =
    if (text.length == 36) Option(canonicalAt(text, 0)) // the form Gazette writes: no substrings on the hot path
    else parseOther(text)

  private def parseOther(text: String): Option[UUID] = text.length match {
    case 38 if text.head == '{' && text.last == '}' => Option(canonicalAt(text, 1))
    case 45 if text.regionMatches(true, 0, "urn:uuid:", 0, 9) => Option(canonicalAt(text, 9))
    case 32 if text.forall(hexDigit(_) >= 0) =>
      Some(new UUID(java.lang.Long.parseUnsignedLong(text.substring(0, 16), 16),
          java.lang.Long.parseUnsignedLong(text.substring(16), 16)))
    case _ => None
  }

  /** The UUID in canonical form (`8-4-4-4-12` hex digits, any case) in the ASCII bytes
    * `b[from, until)`, or null when they hold anything else.
    */
  def canonical(b: Array[Byte], from: Int, until: Int): UUID =
    if (until - from != 36) null
    else {
      val c = new Canonical
      var j = 0
      while (j < 36 && c.take(j, (b(from + j) & 0xff).toChar)) j += 1
      c.result(j)
    }

  private def canonicalAt(s: String, at: Int): UUID = {
    val c = new Canonical
    var j = 0
    while (j < 36 && c.take(j, s.charAt(at + j))) j += 1
    c.result(j)
  }

  // The canonical UUID's 36 characters, taken one at a time: a class rather than a function of
  // the index, which would be a closure allocated for every message read.
  private final class Canonical {
    private var hi, lo = 0L
    private var digits = 0

    // Whether `c`, the `j`th character, fits.
    def take(j: Int, c: Char): Boolean =
      if (j == 8 || j == 13 || j == 18 || j == 23) c == '-'
      else {
        val d = hexDigit(c)
        if (digits < 16) hi = (hi << 4) | d else lo = (lo << 4) | d
        digits += 1
        d >= 0
      }

    def result(taken: Int): UUID = if (taken == 36) new UUID(hi, lo) else null
  }

  // ASCII hex digits only, as Go's parser takes: Character.digit also takes other scripts' digits.
  @inline private def hexDigit(c: Char): Int =
    if (c >= '0' && c <= '9') c - '0'
    else if (c >= 'a' && c <= 'f') c - 'a' + 10
    else if (c >= 'A' && c <= 'F') c - 'A' + 10
    else -1

  /** The UUID in the 16 bytes at `b[from]`, most significant first. */
  def fromBytes(b: Array[Byte], from: Int): UUID = {
    val bb = java.nio.ByteBuffer.wrap(b, from, 16)
    new UUID(bb.getLong, bb.getLong)
  }

  /** The 16 bytes of `uuid`, most significant first, as Gazette stores UUIDs in protobuf. */
  def toBytes(uuid: UUID): Array[Byte] =
    java.nio.ByteBuffer.allocate(16).putLong(uuid.getMostSignificantBits).putLong(uuid.getLeastSignificantBits).array()
}
