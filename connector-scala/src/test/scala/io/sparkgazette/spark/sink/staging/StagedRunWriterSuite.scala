package io.sparkgazette.spark
package sink
package staging

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import io.sparkgazette.spark.sink.config.StagingLocation
import io.sparkgazette.testing.SyncRecordingFileSystem
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

class StagedRunWriterSuite extends AnyFunSuite {
  test("every part of a staged run is on disk before the run goes to the driver to be recorded") {
    val conf = new Configuration()
    conf.set("fs.gzsync.impl", classOf[SyncRecordingFileSystem].getName)
    conf.setBoolean("fs.gzsync.impl.disable.cache", true)
    val dir = Files.createTempDirectory("staged-runs")
    val writer =
      new StagedRunWriter(
        new Path(s"gzsync://$dir/0-0-0-0"), "token", StagingLocation(s"gzsync://$dir"), conf, partBytes = 100)
    (1 to 10).foreach(clock => writer.write(Array.fill[Byte](60)('x'), clock))
    val runs = writer.close("j", "producer", 10, 0, _ => Array.emptyByteArray)
    assert(runs.map(_.bytes) == Seq(120, 120, 120, 120, 120))
    assert(runs.map(_.clock) == Seq(2, 4, 6, 8, 10))
    assert(SyncRecordingFileSystem.unsynced.asScala.toSeq.isEmpty, "parts closed with bytes not yet synced")
  }
}
