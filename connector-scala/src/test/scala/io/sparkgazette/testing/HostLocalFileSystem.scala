package io.sparkgazette.testing

import java.io.File
import java.net.URI
import java.nio.file.Files

import org.apache.hadoop.fs.{Path, RawLocalFileSystem}

/** The local file system under scheme `gzhost:`, as a path on each host's own disk looks when
  * the hosts share nothing: Spark's task threads read and write their files under another root
  * than the driver's.
  */
final class HostLocalFileSystem extends RawLocalFileSystem {
  override def getUri: URI = URI.create("gzhost:///")
  override def getScheme: String = "gzhost"

  private def inTask = Thread.currentThread().getName.startsWith("Executor task launch worker")

  override def pathToFile(path: Path): File = {
    val file = super.pathToFile(path)
    if (inTask) new File(HostLocalFileSystem.executorRoot, file.getAbsolutePath) else file
  }
}

object HostLocalFileSystem {
  lazy val executorRoot: File = Files.createTempDirectory("executor-host").toFile
}
