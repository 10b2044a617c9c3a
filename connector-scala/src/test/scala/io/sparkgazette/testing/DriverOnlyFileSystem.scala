package io.sparkgazette.testing

import java.io.FileNotFoundException
import java.net.URI

import org.apache.hadoop.fs.{FSDataInputStream, FileStatus, Path, RawLocalFileSystem}

/** The local file system under scheme `gzdriver:`, as an executor on another host sees a
  * directory on the driver's own disk: Spark's task threads find nothing there.
  */
final class DriverOnlyFileSystem extends RawLocalFileSystem {
  override def getUri: URI = URI.create("gzdriver:///")
  override def getScheme: String = "gzdriver"

  private def inTask = Thread.currentThread().getName.startsWith("Executor task launch worker")

  override def exists(p: Path): Boolean = !inTask && super.exists(p)
  override def getFileStatus(p: Path): FileStatus =
    if (inTask) throw new FileNotFoundException(p.toString) else super.getFileStatus(p)
  override def listStatus(p: Path): Array[FileStatus] =
    if (inTask) throw new FileNotFoundException(p.toString) else super.listStatus(p)
  override def open(p: Path, bufferSize: Int): FSDataInputStream =
    if (inTask) throw new FileNotFoundException(p.toString) else super.open(p, bufferSize)
}
