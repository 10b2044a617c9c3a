package io.sparkgazette.spark
package sink
package intents

import java.nio.file.Files

import io.sparkgazette.message.AckIntent
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

class AckIntentLogSuite extends AnyFunSuite {
  private def intents(tag: String) = Seq(AckIntent("out/a", s"$tag-a".getBytes), AckIntent("out/b", s"$tag-b".getBytes))
  private def texts(is: Seq[AckIntent]) = is.map(i => i.journal -> new String(i.intent))

  for ((name, scheme) <- Seq("local" -> "file://", "local without checksums" -> "file://", "a plain path" -> "")) {
    test(s"a recorded epoch is never replaced ($name file system)") {
      val conf = new Configuration()
      if (name == "local without checksums")
        conf.set("fs.file.impl", classOf[org.apache.hadoop.fs.RawLocalFileSystem].getName)
      conf.setBoolean("fs.file.impl.disable.cache", true)
      val log = AckIntentLog.epochs(scheme + Files.createTempDirectory("intents").toString, conf)
      assert(texts(log.record("7", IntentRecord(intents("first"))).intents) == texts(intents("first")))
      // A second driver (a zombie, or a retry) records other intents for the same epoch: the first stay.
      assert(texts(log.record("7", IntentRecord(intents("second"))).intents) == texts(intents("first")))
      assert(texts(log.read("7").get.intents) == texts(intents("first")))
      assert(log.contains("7") && !log.contains("8"))
    }
  }

  test("an epoch's producers, clocks, run and generations round-trip; the latest epoch is where a stream resumes") {
    import io.sparkgazette.message.ProducerId
    val log = AckIntentLog.epochs(Files.createTempDirectory("intents").toString, new Configuration())
    val p = SinkProducers(-42L, Map((ProducerId(0x0180aabbccddL), "out/a") -> 77L), "run-1", Map(3 -> 2, 11 -> 1))
    log.record("9", IntentRecord(Seq(AckIntent("out/a", "x".getBytes, 77L)), Some(p)))
    log.record("10", IntentRecord(Nil, Some(p.after(Seq((ProducerId(0x0180aabbccddL), "out/b", 99L))))))
    assert(log.read("9").get.producers.contains(p) && log.read("9").get.intents.map(_.clock) == Seq(77L))
    assert(log.latest().flatMap(_.producers).map(_.clockFloor(ProducerId(0x0180aabbccddL))).contains(99L))
  }

  test("batches and epochs are kept apart") {
    val dir = Files.createTempDirectory("intents").toString
    AckIntentLog.batches(dir, new Configuration()).record("7", IntentRecord(intents("batch")))
    assert(!AckIntentLog.epochs(dir, new Configuration()).contains("7"))
  }
}
