package io.sparkgazette.spark
package errors

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}
import java.lang.reflect.Modifier

import scala.annotation.nowarn
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import io.sparkgazette.client.auth.{Credentials, Token, TokenUnavailableException}
import io.sparkgazette.client.protocol.Status
import io.sparkgazette.client.{
  AuthTokenException, BrokerStatusException, BrokerUnavailableException, StoreUnavailableException
}
import io.sparkgazette.spark.protobuf.ProtobufErrors
import io.sparkgazette.spark.testing.SparkThrowables._
import org.apache.spark.SparkThrowable
import org.scalatest.funsuite.AnyFunSuite

class GazetteErrorsSuite extends AnyFunSuite {

  // One call of each builder, by the builder's name: a builder added without a line here fails
  // the first test.
  private val gazette: Map[String, () => Throwable] = Map(
    "unknownOption" -> (() => GazetteErrors.unknownOption("typo", Seq("broker", "selector"))),
    "unknownSessionOption" ->
      (() => GazetteErrors.unknownSessionOption("brokr", "spark.datasource.gazette.brokr", Seq("broker"))),
    "missingOption" -> (() => GazetteErrors.missingOption("broker", "the broker address")),
    "brokerUnavailable" ->
      (() =>
        GazetteErrors.brokerUnavailable(new BrokerUnavailableException("Read", "a/b",
            "http://127.0.0.1:1", " at offset 4096", new RuntimeException("refused"), 1.second))),
    "storeUnavailable" ->
      (() =>
        GazetteErrors.storeUnavailable(new StoreUnavailableException(
            "Read",
            "a/b",
            "http://127.0.0.1:1",
            " at offset 4096",
            "s3://bucket/prefix/",
            "has been failing for 12s (last: HTTP 503)",
            new RuntimeException("fetching fragment"),
            1.second
          ))),
    "brokerRefused" ->
      (() =>
        GazetteErrors.brokerRefused(new BrokerStatusException("Append", "a/b",
            Status.JOURNAL_NOT_FOUND, "http://127.0.0.1:8080"))),
    "authToken" -> (() => GazetteErrors.authToken(refusal(Credentials.File("/run/token"), expired = true))),
    "missingOneOf" -> (() => GazetteErrors.missingOneOf("selector", "journals", "which journals to read")),
    "invalidOption" -> (() => GazetteErrors.invalidOption("maxBytesPerTrigger", "-5", "a positive whole number")),
    "invalidSecret" -> (() => GazetteErrors.invalidSecret("authToken", "a JWT without spaces")),
    "conflictingOptions" -> (() => GazetteErrors.conflictingOptions("selector", "journals")),
    "noJournals" -> (() => GazetteErrors.noJournals("selector 'prefix=out/'")),
    "unknownJournal" -> (() => GazetteErrors.unknownJournal("a/b", "startingOffsets")),
    "missingJournal" -> (() => GazetteErrors.missingJournal("a/b", Some("journal"))),
    "rowJournalNotTargeted" -> (() => GazetteErrors.rowJournalNotTargeted("a/x", 3, 1, Seq("a/b", "a/c"))),
    "unsupportedFraming" -> (() => GazetteErrors.unsupportedFraming("a/b", "unrecognized content-type (x)")),
    "unwritableFraming" -> (() => GazetteErrors.unwritableFraming("a/b", "unrecognized content-type (x)")),
    "unwritableJournals" ->
      (() => GazetteErrors.unwritableJournals(Seq(("a/b", 10L, "unrecognized content-type (x)")))),
    "dataLoss" -> (() => GazetteErrors.dataLoss("a/b", "bytes [0, 100) were removed")),
    "malformedMessage" ->
      (() => GazetteErrors.malformedMessage("a/b", 4096, 4100, "invalid JSON", new RuntimeException("x"))),
    "invalidSchema" -> (() => GazetteErrors.invalidSchema("field '_gazette' takes the name of the connector's column")),
    "missingSequencerState" -> (() => GazetteErrors.missingSequencerState("a/b", 4096, "/ckpt/sources/0")),
    "unsupportedStateFormat" -> (() => GazetteErrors.unsupportedStateFormat("/ckpt/sources/0/x.states", Some(99), 2)),
    "offsetsNotAnObject" -> (() => GazetteErrors.offsetsNotAnObject("[1]")),
    "offsetNotWhole" -> (() => GazetteErrors.offsetNotWhole("a/b", "offset", "1.5")),
    "offsetLogUnreadable" ->
      (() =>
        GazetteErrors.offsetLogUnreadable("file:/ckpt/offsets/3", "not an offset log file (fewer than two lines)")),
    "intentRecordUnreadable" ->
      (() =>
        GazetteErrors.intentRecordUnreadable("file:/ckpt/gazette-sink/real-time/5.json",
          "it is empty or cut short, not a whole record")),
    "stagedRunDamaged" -> (() => GazetteErrors.stagedRunDamaged("a/b", "/ckpt/run", -1, 100)),
    "checkpointNotVisible" -> (() => GazetteErrors.checkpointNotVisible("a/b", "/ckpt", "host-2")),
    "stagedRunNotVisible" ->
      (() => GazetteErrors.stagedRunNotVisible("a/b", "/ckpt/run", "/ckpt", "checkpointLocation")),
    "checkpointWriteFailed" -> (() => GazetteErrors.checkpointWriteFailed("the ACK intents of 7", "/ckpt/7.json")),
    "notASourceCheckpoint" ->
      (() => GazetteErrors.notASourceCheckpoint("NO_GAZETTE_SOURCE", "file:/ckpt", "offsets/3 holds source 0: 12")),
    "realTimeModeUnavailable" -> (() => GazetteErrors.realTimeModeUnavailable("4.0.1")),
    "realTimeCheckpointInMicroBatches" -> (() => GazetteErrors.realTimeCheckpointInMicroBatches()),
    "microBatchLimitsInRealTime" -> (() => GazetteErrors.microBatchLimitsInRealTime(Seq("maxBytesPerTrigger"))),
    "stagingUnwritable" ->
      (() =>
        GazetteErrors.stagingUnwritable(
          "stagingLocation", "/staging", "/staging/w/0.run", new java.io.IOException("no"))),
    "endPastWriteHead" -> (() => GazetteErrors.endPastWriteHead("a/b", 500, 400)),
    "startPastWriteHead" -> (() => GazetteErrors.startPastWriteHead("a/b", 500, 400)),
    "noMessageAtTime" -> (() => GazetteErrors.noMessageAtTime("a/b", 1767225600000L, 400, "startingTimestamp")),
    "suspendedAtTime" -> (() => GazetteErrors.suspendedAtTime("a/b", "startingTimestamp")),
    "timeSearchCutShort" -> (() => GazetteErrors.timeSearchCutShort("a/b", 1767225600000L, 300, 400)),
    "readCutShort" -> (() => GazetteErrors.readCutShort("a/b", 300, 0, 400)),
    "journalDeletedDuringWrite" -> (() => GazetteErrors.journalDeletedDuringWrite("a/b", "epoch 3")),
    "extraColumn" -> (() => GazetteErrors.extraColumn("id")),
    "columnType" -> (() => GazetteErrors.columnType("value", "string or binary", "int")),
    "valueColumnNeeded" -> (() => GazetteErrors.valueColumnNeeded("a/b", "text/csv")),
    "notWritableAsJson" -> (() => GazetteErrors.notWritableAsJson("interval")),
    "nullValue" -> (() => GazetteErrors.nullValue(3, 1)),
    "unframableRow" -> (() => GazetteErrors.unframableRow(3, 1, "a/b", "invalid JSON", new RuntimeException("x"))),
    "csvWidth" -> (() => GazetteErrors.csvWidth("a/b", 3, 1, 3, 2)),
    "completeMode" -> (() => GazetteErrors.completeMode()),
    "continuousProcessing" -> (() => GazetteErrors.continuousProcessing()),
    "realTimeOriginNeeded" -> (() => GazetteErrors.realTimeOriginNeeded()),
    "originNotReadInTask" -> (() => GazetteErrors.originNotReadInTask(3L, 1, "in/part-000")),
    "realTimeRandomMapping" -> (() => GazetteErrors.realTimeRandomMapping()),
    "originReadTwiceInTask" -> (() => GazetteErrors.originReadTwiceInTask(3L, 1, "in/part-000")),
    "invalidOrigin" -> (() => GazetteErrors.invalidOrigin(3L, 1, "not-a-uuid")),
    "invalidJournalSpec" ->
      (() => GazetteErrors.invalidJournalSpec("a/b", "compression_codec", "LZ4", "one of SNAPPY")),
    "internal" -> (() => GazetteErrors.internal("an invariant"))
  )

  private val protobuf: Map[String, () => Throwable] = Map(
    "invalidArgument" -> (() => ProtobufErrors.invalidArgument("mode", "lenient", "FAILFAST or PERMISSIVE")),
    "badDescriptorSet" -> (() => ProtobufErrors.badDescriptorSet("x.desc", "it is not a FileDescriptorSet")),
    "unknownProtobufMessage" -> (() => ProtobufErrors.unknownProtobufMessage("demo.Nope", "x.desc", Seq("demo.Event"))),
    "recursiveProtobuf" -> (() => ProtobufErrors.recursiveProtobuf("demo.Node -> demo.Node", "demo.Node.child")),
    "malformedProtobuf" -> (() => ProtobufErrors.malformedProtobuf("demo.Event", "a/b", 4096L, "truncated"))
  )

  // Calls whose arguments pick another of their builder's wordings than the call above does.
  // A Read refused for its token: a JWT whose exp is 2026-01-01T00:00:00Z (none: no token sent).
  private def refusal(c: Credentials, expired: Boolean, token: Boolean = true, cause: Throwable = null) =
    new AuthTokenException(
      "Read",
      "a/b",
      "http://127.0.0.1:8080",
      " at offset 0",
      c,
      token,
      Some(new Token("e30.eyJleHAiOjE3NjcyMjU2MDB9.c2ln")).filter(_ => token).flatMap(_.expiry),
      expired,
      "UNAUTHENTICATED: token is expired",
      cause
    )

  private val otherWordings: Seq[() => Throwable] = Seq(
    () => GazetteErrors.authToken(refusal(Credentials.Provider("x.Tokens", Map.empty), expired = false)),
    () => GazetteErrors.authToken(refusal(Credentials.Anonymous, expired = false, token = false)),
    () =>
      GazetteErrors.authToken(refusal(
          Credentials.File("/run/token"),
          expired = false,
          token = false,
          cause = new TokenUnavailableException(Credentials.File("/run/token"),
            "token file /run/token is empty")
        )),
    () => GazetteErrors.unknownOption("journal", Seq("journals", "broker")),
    () => GazetteErrors.missingJournal("a/b", None),
    () => GazetteErrors.unsupportedStateFormat("/ckpt/sources/0/x.states", None, 2),
    () => GazetteErrors.stagedRunDamaged("a/b", "/ckpt/run", 50, 100),
    () => GazetteErrors.notASourceCheckpoint("MISSING", "file:/ckpt"),
    () => GazetteErrors.notASourceCheckpoint("NO_OFFSET_LOG", "file:/ckpt", "metadata, state/"),
    () => GazetteErrors.notASourceCheckpoint("NO_BATCH", "file:/ckpt"),
    () => ProtobufErrors.unknownProtobufMessage("demo.Nope", "x.desc", Nil)
  )

  // Public in the bytecode: what Scala's private[spark] compiles to, and the forwarders of the traits mixed in.
  private def builders(o: AnyRef): Set[String] =
    o.getClass.getMethods.filter(m =>
      Modifier.isPublic(m.getModifiers) && !m.getName.contains("$") &&
        classOf[Throwable].isAssignableFrom(m.getReturnType)).map(_.getName).toSet

  // The name callers written before Spark 4.0 use.
  @nowarn("cat=deprecation") private def errorClass(t: SparkThrowable): String = t.getErrorClass

  private def throwable(e: Throwable): SparkThrowable = e match {
    case s: SparkThrowable => s
    case other => fail(s"${other.getClass.getName} is not a SparkThrowable: ${other.getMessage}")
  }

  private def built: Seq[(String, Throwable)] =
    (gazette ++ protobuf.map { case (k, v) => s"protobuf.$k" -> v }).toSeq.sortBy(_._1)
      .map { case (name, make) => name -> make() }

  test("every builder is exercised here") {
    assert(builders(GazetteErrors) == gazette.keySet)
    assert(builders(ProtobufErrors) == protobuf.keySet)
  }

  test("condition names are GAZETTE_ names, unique, each with a one-line meaning a table can hold") {
    val names = GazetteErrors.conditions.map(_._1)
    assert(names.nonEmpty && names.distinct == names, names)
    names.foreach(n => assert(n.matches("GAZETTE_[A-Z_]+"), n))
    GazetteErrors.conditions.foreach { case (n, meaning) =>
      assert(meaning.trim.nonEmpty && !meaning.contains('|') && !meaning.contains('\n'), n)
    }
    val raisedByProtobuf = protobuf.values.map(make => condition(throwable(make()))).toSet
    assert(names.filter(_.startsWith("GAZETTE_PROTOBUF_")).toSet == raisedByProtobuf)
  }

  test("every condition in error-conditions.json has a SQLSTATE, a meaning and a message") {
    assert(ErrorConditions.all.map(c => c.name -> c.meaning) == GazetteErrors.conditions)
    for (c <- ErrorConditions.all) {
      assert(c.sqlState.matches("[0-9A-Z]{5}"), s"${c.name}: ${c.sqlState}")
      assert(c.meaning.trim.nonEmpty && c.wordings.nonEmpty, c.name)
      for ((key, wording) <- c.wordings) {
        assert(key == c.name || key.startsWith(s"${c.name}."), key)
        assert(wording.text.trim.nonEmpty && wording.text == wording.text.trim && !wording.text.contains("  "), key)
      }
    }
  }

  private def wordingsOf(e: Throwable): Seq[String] = {
    val t = throwable(e)
    val parameters = t.getMessageParameters.asScala.toMap
    val c = ErrorConditions.all.find(_.name == condition(t)).getOrElse(fail(s"${condition(t)} is not listed"))
    c.wordings.collect {
      case (key, wording)
          if wording.missing(parameters).isEmpty &&
            e.getMessage == s"[${c.name}] ${wording.format(parameters)}" => key
    }.toSeq
  }

  test("every message is a wording filled from its error's parameters, and every wording is some builder's") {
    val all = built.map(_._2) ++ otherWordings.map(_())
    for (e <- all) {
      assert(MessageTemplate.Placeholder.findFirstIn(e.getMessage).isEmpty, s"unfilled: ${e.getMessage}")
      assert(wordingsOf(e).size == 1, s"no one wording, filled from the parameters, says: ${e.getMessage}")
    }
    val unused = ErrorConditions.all.flatMap(_.wordings.keySet).toSet -- all.flatMap(wordingsOf)
    assert(unused.isEmpty, "wordings no builder uses")
  }

  test("a parameter a wording needs and its error is not given is an internal error, not a gap") {
    val missing = intercept[GazetteIllegalStateException](
      GazetteIllegalArgumentException("GAZETTE_UNKNOWN_JOURNAL.MISSING_FROM_OPTION", Map("journal" -> "a/b")))
    assert(condition(missing) == "GAZETTE_INTERNAL_ERROR" && missing.isInternalError)
    assert(missing.getMessage.contains("GAZETTE_UNKNOWN_JOURNAL.MISSING_FROM_OPTION needs parameter(s) option"))
    val unknown = intercept[GazetteIllegalStateException](GazetteIllegalStateException("GAZETTE_NO_SUCH", Map.empty))
    assert(condition(unknown) == "GAZETTE_INTERNAL_ERROR" && unknown.getMessage.contains("GAZETTE_NO_SUCH"))
    // A value is put in as it is: neither read for placeholders nor for a regex's group references.
    val literal = GazetteErrors.missingJournal("<option> $1 \\", None)
    assert(literal.getMessage == "[GAZETTE_UNKNOWN_JOURNAL] Journal '<option> $1 \\' does not exist")
  }

  test("every error carries a listed condition, its SQLSTATE and parameters, and says its condition first") {
    val listed = GazetteErrors.conditions.map(_._1).toSet
    for ((name, e) <- built) {
      val t = throwable(e)
      assert(listed.contains(condition(t)), s"$name: ${condition(t)}")
      assert(errorClass(t) == condition(t), name)
      assert(e.getMessage.startsWith(s"[${condition(t)}] "), s"$name: ${e.getMessage}")
      assert(t.getSqlState.matches("[0-9A-Z]{5}"), s"$name: ${t.getSqlState}")
      assert(!t.getMessageParameters.isEmpty || condition(t) == "GAZETTE_INTERNAL_ERROR", name)
      assert(t.getMessageParameters.asScala.forall { case (k, v) => k.nonEmpty && v != null }, name)
      assert(t.isInternalError == (condition(t) == "GAZETTE_INTERNAL_ERROR"), name)
      // What Spark asks of any SparkThrowable, for conditions it does not know.
      assert(t.getQueryContext.isEmpty)
      askAsSparkDoes(t)
    }
    assert(built.map(b => condition(throwable(b._2))).toSet == listed, "a listed condition no error carries")
  }

  test("errors stay the JDK exceptions they were, which code and PySpark match on") {
    assert(gazette("unknownOption")().isInstanceOf[IllegalArgumentException])
    assert(gazette("invalidOption")().isInstanceOf[IllegalArgumentException])
    assert(gazette("dataLoss")().isInstanceOf[IllegalStateException])
    assert(gazette("completeMode")().isInstanceOf[UnsupportedOperationException])
    assert(gazette("continuousProcessing")().isInstanceOf[UnsupportedOperationException])
    assert(protobuf("unknownProtobufMessage")().isInstanceOf[IllegalArgumentException])
    assert(protobuf("malformedProtobuf")().isInstanceOf[IllegalStateException])
  }

  test("messages name the option, value, journal and offset, and parameters name them too") {
    val invalid = GazetteErrors.invalidOption("maxBytesPerTrigger", "-5", "a positive whole number")
    assert(
      invalid.getMessage == "[GAZETTE_INVALID_OPTION] Gazette option 'maxBytesPerTrigger' has invalid value '-5': " +
        "expected a positive whole number")
    assert(invalid.getMessageParameters.asScala == Map("option" -> "maxBytesPerTrigger", "value" -> "-5",
      "expected" -> "a positive whole number"))
    val unknown = GazetteErrors.unknownOption("typo", Seq("selector", "broker"))
    assert(
      unknown.getMessage == "[GAZETTE_UNKNOWN_OPTION] Unknown Gazette option 'typo'. Known options: broker, selector")
    assert(condition(unknown) == "GAZETTE_UNKNOWN_OPTION" && unknown.getMessageParameters.get("option") == "typo")
    // The sink's spelling given to the source, a typo, another case: the likely option is named.
    val known = Seq("journals", "maxBytesPerTrigger", "minBytesPerTrigger", "broker")
    assert(GazetteErrors.unknownOption("journal", known).getMessage.contains("Did you mean 'journals'?"))
    assert(GazetteErrors.closest("maxBytesPerTriger", known) == Some("maxBytesPerTrigger"))
    assert(GazetteErrors.closest("BROKER", known) == Some("broker"))
    assert(GazetteErrors.closest("selector", known).isEmpty)
    val loss = GazetteErrors.dataLoss("a/b", "bytes [0, 100) were removed")
    assert(
      condition(loss) == "GAZETTE_DATA_LOSS" && loss.getMessage.contains("Data loss in journal a/b: bytes [0, 100)"))
    assert(loss.getMessage.contains("'failOnDataLoss'") && loss.getMessageParameters.get("journal") == "a/b")
    val head = GazetteErrors.startPastWriteHead("a/b", 500, 400)
    assert(head.getMessage.contains("'startingOffsets' starts journal a/b at offset 500, past its write head 400"))
    assert(head.getMessageParameters.asScala.toMap.filter(p => Set("option", "journal", "offset")(p._1)) ==
      Map("option" -> "startingOffsets", "journal" -> "a/b", "offset" -> "500"))
    val state = GazetteErrors.missingSequencerState("a/b", 4096, "/ckpt/sources/0")
    assert(
      state.getMessage.contains("journal a/b at offset 4096") && state.getMessageParameters.get("offset") == "4096")
    val malformed = GazetteErrors.malformedMessage("a/b", 4096, 4100, "invalid JSON", new RuntimeException("x"))
    assert(
      malformed.getMessage.contains("journal a/b at offset 4096 (4 bytes): invalid JSON") && malformed.getCause != null)
    val missing = GazetteErrors.missingJournal("out/a", Some("journal"))
    assert(missing.getMessage == "[GAZETTE_UNKNOWN_JOURNAL] Journal 'out/a' (option 'journal') does not exist")
  }

  test("a secret's value is in no message and no parameter") {
    for ((option, e) <- Seq(
        "authToken" -> GazetteErrors.invalidSecret("authToken", "a JWT without spaces"),
        "AuthToken" -> GazetteErrors.invalidOption("AuthToken", "s3cr3t with spaces", "a JWT without spaces")
      )) {
      assert(condition(e) == "GAZETTE_INVALID_OPTION" && e.getMessage.contains(s"'$option'"), e.getMessage)
      assert(!e.getMessage.contains("s3cr3t") && !e.getMessageParameters.asScala.values.exists(_.contains("s3cr3t")))
      assert(e.getMessageParameters.get("value") == "*********(redacted)")
    }
  }

  test("an error raised in a task reaches the driver whole: condition and parameters survive serialization") {
    for ((name, e) <- built) {
      val out = new ByteArrayOutputStream()
      new ObjectOutputStream(out).writeObject(e)
      val back = new ObjectInputStream(new ByteArrayInputStream(out.toByteArray)).readObject().asInstanceOf[Throwable]
      assert(back.getClass == e.getClass && back.getMessage == e.getMessage, name)
      assert(condition(throwable(back)) == condition(throwable(e)), name)
      assert(throwable(back).getMessageParameters == throwable(e).getMessageParameters, name)
    }
  }
}
