package io.sparkgazette.testing

import java.net.URI

import org.apache.hadoop.fs.RawLocalFileSystem

/** The local file system under scheme `gztest:`, for tests that configure it in a Spark session
  * only (`spark.conf.set("fs.gztest.impl", ...)`), as users set object-store credentials.
  */
final class SessionOnlyFileSystem extends RawLocalFileSystem {
  override def getUri: URI = URI.create("gztest:///")
  override def getScheme: String = "gztest"
}
