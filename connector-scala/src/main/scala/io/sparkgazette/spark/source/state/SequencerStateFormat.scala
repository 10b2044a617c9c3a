package io.sparkgazette.spark
package source
package state

import java.io.{BufferedOutputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.source.offsets.StateRef

/** The binary form of a task's file of Sequencer states, as [[SequencerStateStore]] writes it. */
private[state] object SequencerStateFormat {
  val FormatVersion = 2
  private val Magic = 0x475a5351 // "GZSQ"

  /** The binary form: magic, version, the index's length, the index (the number of states, then
    * per state its journal, offset, revision, origin, resume offset, number of producers and
    * their position in the file), then each state's producers: id, last ACK clock and open
    * transaction's begin offset (-1 if none), 24 bytes a producer, so that a million producers
    * take 23 MiB.
    */
  def write(states: Seq[(String, Long, SequencerState)], stream: java.io.OutputStream): Unit = {
    val indexBytes = new ByteArrayOutputStream()
    val index = new DataOutputStream(indexBytes)
    index.writeInt(states.size)
    // Positions are known once the index's length is: it is written twice, the second time exact.
    def writeIndex(base: Long): Unit = {
      indexBytes.reset()
      index.writeInt(states.size)
      var position = base
      states.foreach { case (journal, offset, s) =>
        index.writeUTF(journal)
        index.writeLong(offset)
        index.writeLong(s.revision)
        index.writeLong(s.origin)
        index.writeLong(s.resume)
        index.writeInt(s.producers.size)
        index.writeLong(position)
        position += s.producers.size * 24L
      }
      index.flush()
    }
    writeIndex(0)
    writeIndex(12L + indexBytes.size())
    val out = new DataOutputStream(new BufferedOutputStream(stream, 1 << 16))
    out.writeInt(Magic)
    out.writeInt(FormatVersion)
    out.writeInt(indexBytes.size())
    indexBytes.writeTo(out)
    states.foreach { case (_, _, s) =>
      s.producers.foreach { p =>
        out.writeLong(p.producer.value)
        out.writeLong(p.lastAck)
        out.writeLong(p.begin)
      }
    }
    out.flush()
  }

  def readIndex(file: String, stream: java.io.InputStream): Seq[StateRef] = {
    val in = new DataInputStream(new java.io.BufferedInputStream(stream, 1 << 16))
    val header = new Array[Byte](12)
    try in.readFully(header)
    catch { case _: java.io.EOFException => throw GazetteErrors.unsupportedStateFormat(file, None, FormatVersion) }
    val h = java.nio.ByteBuffer.wrap(header)
    if (h.getInt() != Magic) throw GazetteErrors.unsupportedStateFormat(file, None, FormatVersion)
    val version = h.getInt()
    if (version != FormatVersion) throw GazetteErrors.unsupportedStateFormat(file, Some(version), FormatVersion)
    val length = h.getInt()
    if (length < 4) throw GazetteErrors.unsupportedStateFormat(file, None, FormatVersion)
    val bytes = new Array[Byte](length)
    try in.readFully(bytes)
    catch { case _: java.io.EOFException => throw GazetteErrors.unsupportedStateFormat(file, None, FormatVersion) }
    val index = new DataInputStream(new java.io.ByteArrayInputStream(bytes))
    val n = index.readInt()
    (0 until n).map { _ =>
      val journal = index.readUTF()
      val offset = index.readLong()
      val revision = index.readLong()
      val origin = index.readLong()
      val resume = index.readLong()
      val producers = index.readInt()
      val position = index.readLong()
      if (producers < 0) throw GazetteErrors.unsupportedStateFormat(file, None, FormatVersion)
      StateRef(file, journal, offset, revision, origin, resume, position, producers)
    }
  }
}
