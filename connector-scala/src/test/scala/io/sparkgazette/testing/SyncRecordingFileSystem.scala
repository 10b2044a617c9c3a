package io.sparkgazette.testing

import java.io.OutputStream
import java.net.URI
import java.util.concurrent.ConcurrentLinkedQueue

import org.apache.hadoop.fs.{FSDataOutputStream, Path, RawLocalFileSystem, Syncable}
import org.apache.hadoop.util.Progressable

/** The local file system under scheme `gzsync:`, recording each file closed with bytes that no
  * hsync put on disk: what a crash of the host could take back after the file was closed.
  */
final class SyncRecordingFileSystem extends RawLocalFileSystem {
  override def getUri: URI = URI.create("gzsync:///")
  override def getScheme: String = "gzsync"

  override def create(f: Path, overwrite: Boolean, bufferSize: Int, replication: Short, blockSize: Long,
      progress: Progressable): FSDataOutputStream = {
    val out = super.create(f, overwrite, bufferSize, replication, blockSize, progress)
    new FSDataOutputStream(
      new OutputStream with Syncable {
        private var unsynced = 0L
        override def write(b: Int): Unit = { out.write(b); unsynced += 1 }
        override def write(b: Array[Byte], off: Int, len: Int): Unit = { out.write(b, off, len); unsynced += len }
        override def hflush(): Unit = out.hflush()
        override def hsync(): Unit = { out.hsync(); unsynced = 0 }
        override def close(): Unit = { out.close(); if (unsynced > 0) SyncRecordingFileSystem.unsynced.add(f.toString) }
      },
      null
    )
  }
}

object SyncRecordingFileSystem {
  val unsynced = new ConcurrentLinkedQueue[String]()
}
