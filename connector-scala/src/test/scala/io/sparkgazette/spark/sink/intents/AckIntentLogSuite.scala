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

  // Hadoop's local file system gives a new file the permissions fs.permissions.umask-mode leaves, as
  // it does Spark's own offset and commit logs in the same checkpoint; the sink's records and marks,
  // made with java.nio, must take the same, not the process's umask.
  test("a real-time record and its mark take the permissions the Hadoop configuration sets") {
    import java.nio.file.attribute.PosixFilePermissions
    val conf = new Configuration()
    conf.set("fs.permissions.umask-mode", "077")
    conf.setBoolean("fs.file.impl.disable.cache", true)
    val root = Files.createTempDirectory("intents")
    val log = AckIntentLog.realTimeBatches("file://" + root, conf)
    log.record("3", IntentRecord(intents("first")))
    log.mark("3", "again")
    val dir = root.resolve("gazette-sink/real-time")
    def perms(name: String) = PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(name)))
    // What Hadoop gives a file it creates under the same configuration, beside them:
    val fs = new org.apache.hadoop.fs.Path("file://" + dir).getFileSystem(conf)
    fs.create(new org.apache.hadoop.fs.Path("file://" + dir.resolve("hadoop-made")), true).close()
    assert(perms("hadoop-made") == "rw-------")
    assert(perms("3.json") == perms("hadoop-made"), "the record")
    assert(perms("3.again") == perms("hadoop-made"), "the mark")
  }

  // A record cut short (a crash before the file system wrote its bytes: neither way of writing
  // syncs the file before linking it into place) is never replaced: reading it must name it.
  test("an empty or cut-short record is refused with an error naming its file") {
    val root = Files.createTempDirectory("intents")
    val log = AckIntentLog.realTimeBatches(root.toString, new Configuration())
    log.record("4", IntentRecord(intents("first")))
    val dir = root.resolve("gazette-sink/real-time")
    for ((name, bytes) <- Seq("5" -> Array.emptyByteArray, "6" -> Files.readAllBytes(dir.resolve("4.json")).take(20))) {
      Files.write(dir.resolve(s"$name.json"), bytes)
      val e = intercept[Throwable](log.read(name))
      assert(e.isInstanceOf[io.sparkgazette.spark.errors.GazetteThrowable], s"$name.json: $e")
      assert(e.getMessage.contains(dir.resolve(s"$name.json").toString), e.getMessage)
    }
  }

  // Checkpoints cross versions: a record Hadoop's checksummed local file system wrote (with its
  // .crc, as a version writing through Hadoop leaves it) is read and kept by a java.nio writer, and
  // one java.nio wrote (no .crc) is read through Hadoop's checksummed file system.
  test("records written through Hadoop (with .crc) and through java.nio read either way") {
    val conf = new Configuration()
    conf.setBoolean("fs.file.impl.disable.cache", true)
    val root = Files.createTempDirectory("intents")
    val log = AckIntentLog.realTimeBatches("file://" + root, conf)
    log.record("1", IntentRecord(intents("nio")))
    val dir = root.resolve("gazette-sink/real-time")
    val fs = new org.apache.hadoop.fs.Path("file://" + dir).getFileSystem(conf)
    assert(fs.isInstanceOf[org.apache.hadoop.fs.LocalFileSystem])
    val out = fs.create(new org.apache.hadoop.fs.Path("file://" + dir.resolve("2.json")), false)
    try out.write(Files.readAllBytes(dir.resolve("1.json")))
    finally out.close()
    assert(Files.exists(dir.resolve(".2.json.crc")) && !Files.exists(dir.resolve(".1.json.crc")))
    assert(texts(log.record("2", IntentRecord(intents("other"))).intents) == texts(intents("nio")))
    assert(texts(log.read("2").get.intents) == texts(intents("nio")))
    assert(texts(log.read("1").get.intents) == texts(intents("nio")))
    assert(log.latest().map(r => texts(r.intents)).contains(texts(intents("nio"))))
    // A .crc left beside a record that is written again is what Hadoop would refuse to read: retire
    // (Hadoop's rename) carries it with the record, and prune (Hadoop's delete) removes it.
    log.retire("2")
    assert(!Files.exists(dir.resolve(".2.json.crc")))
    log.record("2", IntentRecord(intents("again")))
    assert(texts(log.read("2").get.intents) == texts(intents("again")))
  }
}
