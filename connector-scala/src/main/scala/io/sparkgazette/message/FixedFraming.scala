package io.sparkgazette.message

import java.io.ByteArrayOutputStream
import java.util.UUID

/** `application/x-protobuf-fixed`: each message is an 8-byte header, the magic word
  * `66 33 93 36` and the payload's length as a little-endian uint32, then the serialized
  * protobuf. The UUID is the 16 raw bytes of the `bytes` field `uuidField`.
  *
  * Bytes where a header should be but is not are reported as a desynchronization covering
  * everything up to the next magic word, where reading resumes, as Gazette's reader does.
  */
final class FixedFraming(val uuidField: Int) extends Framing {
  require(uuidField >= 1 && uuidField <= ProtoWire.MaxFieldNumber, s"uuid field number $uuidField is out of range")
  import FixedFraming._

  override def contentType: String = Framing.ProtobufFixed

  override def toString: String = s"FixedFraming($uuidField)"

  override private[message] def newUnpacker(): Unpacker = new Unpacker {
    override def resumes: Boolean = true
    override def unpack(b: Array[Byte], from: Int, until: Int, atEnd: Boolean, moreReady: Boolean): Unpacked = {
      val n = until - from
      if (n < HeaderLength) {
        // A lone trailing newline is tolerated as the end of data, as Gazette does.
        if (!atEnd) Unpacked.NeedMore
        else if (n == 1 && b(from) == '\n') Unpacked.Skip(1)
        else Unpacked.Malformed(n, s"truncated message: $n bytes, fewer than a frame header")
      } else if (!isMagic(b, from)) {
        var j = from + 1
        while (j + MagicWord.length <= until && !isMagic(b, j)) j += 1
        if (j + MagicWord.length <= until)
          Unpacked.Malformed(j - from, s"desynchronized: no frame header; ${j - from} bytes skipped to the next one")
        else if (atEnd) Unpacked.Malformed(n, s"desynchronized: no frame header in the last $n bytes")
        else if (n > MaxDesyncBuffer) Unpacked.Malformed(n - 3, s"desynchronized: no frame header in ${n - 3} bytes")
        else Unpacked.NeedMore
      } else {
        val size = HeaderLength + (java.lang.Integer.toUnsignedLong(littleEndianInt(b, from + 4)))
        if (size > MaxFrameLength)
          Unpacked.Malformed(
            MagicWord.length, s"desynchronized: frame header claims $size bytes, more than $MaxFrameLength")
        else if (n < size) {
          if (atEnd) Unpacked.Malformed(n, s"truncated message: frame of $size bytes but only $n remain")
          else Unpacked.NeedMore
        } else {
          val length = size.toInt
          ProtoWire.lastBytesField(b, from + HeaderLength, from + length, uuidField) match {
            case Left(problem) => Unpacked.Malformed(length, s"invalid protobuf payload: $problem")
            case Right(None) => Unpacked.Message(length, from + HeaderLength, from + length, Uuid.Zero)
            case Right(Some((s, e))) =>
              if (e == s) Unpacked.Message(length, from + HeaderLength, from + length, Uuid.Zero)
              else if (e - s == 16) Unpacked.Message(length, from + HeaderLength, from + length, Uuid.fromBytes(b, s))
              else Unpacked.Malformed(length, s"uuid field $uuidField has ${e - s} bytes, expected 16")
          }
        }
      }
    }
  }

  override def frame(payload: Array[Byte], uuid: UUID, out: ByteArrayOutputStream): Unit = {
    // A copied message comes with its input's UUID; Gazette's Publisher, too, sets a message's
    // UUID whatever it held.
    val rest = ProtoWire.withoutBytesField(payload, 0, payload.length, uuidField) match {
      case Left(problem) => throw new MessageFormatException(s"invalid protobuf payload: $problem")
      case Right(rest) => rest
    }
    val field = uuidBytesField(uuid)
    writeHeader(rest.length + field.length, out)
    out.write(rest)
    out.write(field)
  }

  override def frameAck(uuid: UUID, like: Array[Byte], out: ByteArrayOutputStream): Unit = {
    val field = uuidBytesField(uuid)
    writeHeader(field.length, out)
    out.write(field)
  }

  private def uuidBytesField(uuid: UUID): Array[Byte] = {
    val f = new ByteArrayOutputStream(24)
    ProtoWire.writeVarint(f, (uuidField.toLong << 3) | 2)
    f.write(16)
    f.write(Uuid.toBytes(uuid))
    f.toByteArray
  }
}

object FixedFraming {
  val MagicWord: Array[Byte] = Array(0x66, 0x33, 0x93, 0x36).map(_.toByte)
  val HeaderLength: Int = 8

  /** Frames beyond this length are taken for a corrupt header rather than buffered. */
  val MaxFrameLength: Long = 1L << 30

  // How much unframed data is held while looking for the next magic word before it is reported.
  private val MaxDesyncBuffer = 1 << 20

  private def isMagic(b: Array[Byte], at: Int): Boolean =
    b(at) == MagicWord(0) && b(at + 1) == MagicWord(1) && b(at + 2) == MagicWord(2) && b(at + 3) == MagicWord(3)

  private def littleEndianInt(b: Array[Byte], at: Int): Int =
    (b(at) & 0xff) | ((b(at + 1) & 0xff) << 8) | ((b(at + 2) & 0xff) << 16) | ((b(at + 3) & 0xff) << 24)

  private def writeHeader(payloadLength: Int, out: ByteArrayOutputStream): Unit = {
    out.write(MagicWord)
    out.write(payloadLength & 0xff); out.write((payloadLength >>> 8) & 0xff)
    out.write((payloadLength >>> 16) & 0xff); out.write((payloadLength >>> 24) & 0xff)
  }
}
