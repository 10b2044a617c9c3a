package io.sparkgazette.spark
package sink

import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.file.{Files, Path, StandardOpenOption}

import com.google.protobuf.{ByteString, UnsafeByteOperations}

/** What a task publishes to one journal, held for the one append it makes there at commit: in
  * memory up to `memoryBytes`, then in a local file, mapped (not read) for the append.
  *
  * One append per task and journal keeps each producer's messages contiguous however many
  * tasks write at once, so that a reader's replay of a producer is not spread across the whole
  * epoch. (Every ACK still follows every run: Gazette's reader replays a producer from its run
  * to its ACK.)
  */
private[sink] final class JournalSpool(memoryBytes: Int, dir: Path) extends AutoCloseable {
  private val memory = new ByteArrayOutputStream()
  private var file: Path = _
  private var channel: FileChannel = _
  private var spilled = 0L

  def write(bytes: Array[Byte]): Unit = write(bytes, 0, bytes.length)

  def write(bytes: Array[Byte], offset: Int, length: Int): Unit = {
    memory.write(bytes, offset, length)
    if (memory.size >= memoryBytes) spill()
  }

  def size: Long = spilled + memory.size

  /** Everything written, as one ByteString over the file and memory (nothing is copied). */
  def content(): ByteString = {
    val fromFile =
      if (channel == null) Nil
      else
        (0L until spilled by JournalSpool.MapBytes).iterator.map { at =>
          UnsafeByteOperations.unsafeWrap(channel.map(FileChannel.MapMode.READ_ONLY, at,
              math.min(JournalSpool.MapBytes, spilled - at)))
        }.toList
    (fromFile :+ ByteString.copyFrom(memory.toByteArray)).reduce(_.concat(_))
  }

  override def close(): Unit = if (channel != null) {
    channel.close()
    Files.deleteIfExists(file)
    channel = null
  }

  private def spill(): Unit = {
    if (channel == null) {
      file = Files.createTempFile(dir, "gazette-sink-", ".spool")
      file.toFile.deleteOnExit()
      channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)
    }
    val buf = ByteBuffer.wrap(memory.toByteArray)
    while (buf.hasRemaining) spilled += channel.write(buf, spilled)
    memory.reset()
  }
}

private[sink] object JournalSpool {
  private val MapBytes: Long = 1L << 30
}
