"""The mutations `make test-mutations` applies to the connector's main code, one at a time.

Each is a small change a plausible bug could make: a snippet that must occur exactly once in one
main source file, what replaces it, what that breaks, and the suites expected to catch it, run in
order until one fails. Suites are sbt `testOnly` names; a test filter (ScalaTest's `-z`, a
substring of test names) keeps an integration suite to the tests that matter. The fast unit
suites come first wherever they truly catch the mutation.
"""

from __future__ import annotations

from dataclasses import dataclass

MAIN = "connector-scala/src/main/scala/io/sparkgazette/"


@dataclass(frozen=True)
class Suite:
    name: str
    tests: tuple[str, ...] = ()  # substrings of the names of the tests to run; all when empty

    def command(self) -> str:
        filters = "".join(f' -z "{t}"' for t in self.tests)
        return f"connector/testOnly *.{self.name}" + (f" --{filters}" if filters else "")

    def __str__(self) -> str:
        return self.name + "".join(f' -z "{t}"' for t in self.tests)


def suite(name: str, *tests: str) -> Suite:
    return Suite(name, tests)


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str  # under MAIN
    find: str
    replace: str
    breaks: str
    suites: tuple[Suite, ...]


SEQUENCER = "message/Sequencer.scala"
RANGE_READER = "spark/source/reading/JournalRangeReader.scala"
DATA_WRITER = "spark/sink/GazetteDataWriter.scala"
SINK_ROWS = "spark/sink/rows/SinkRows.scala"
SINK_PRODUCERS = "spark/sink/intents/SinkProducers.scala"
MESSAGE_ITERATOR = "message/MessageIterator.scala"
STORE_HEALTH = "client/StoreHealth.scala"

MUTATIONS = (
    Mutation(
        "sequencer-no-duplicate-check",
        SEQUENCER,
        "else if (env.clock <= p.maxClock) ContinueTxnClockLarger",
        "else if (false) ContinueTxnClockLarger",
        "a CONTINUE_TXN message re-sent at a clock the open transaction holds is held again",
        (suite("SequencerSuite"),),
    ),
    Mutation(
        "sequencer-emits-duplicates",
        SEQUENCER,
        "val duplicate = env.clock != 0 && (env.clock <= emit.minClock || continues && env.clock <= walked)",
        "val duplicate = false",
        "a commit emits messages at or below the producer's acknowledged clock (replayed or restored) again",
        (suite("SequencerSuite"),),
    ),
    Mutation(
        "sequencer-commits-rollback",
        SEQUENCER,
        "val rolledBack = env.clock > emit.maxClock",
        "val rolledBack = false",
        "an ACK commits the held messages whose clocks lie beyond it, which it rolls back",
        (suite("SequencerSuite"),),
    ),
    Mutation(
        "sequencer-checkpoint-drops-producer",
        SEQUENCER,
        "producers.foreach { id =>",
        "producers.drop(1).foreach { id =>",
        "a checkpoint leaves out each journal's first producer: its open transaction and last ACK are forgotten",
        (suite("SequencerSuite"),),
    ),
    Mutation(
        "sequencer-prunes-open-producer",
        SEQUENCER,
        "if (p.begin != -1 || newest >= bound)",
        "if (newest >= bound)",
        "a checkpoint prunes an old producer whose transaction is open: its ACK later finds nothing to commit",
        (suite("SequencerSuite"),),
    ),
    Mutation(
        "sequencer-restore-forgets-begin",
        SEQUENCER,
        "new Partial(s.journal, s.producer, s.lastAck, s.lastAck, s.begin)",
        "new Partial(s.journal, s.producer, s.lastAck, s.lastAck, -1L)",
        "a restored producer's open transaction loses where it began: its ACK commits nothing before the restore",
        (suite("SequencerSuite"),),
    ),
    Mutation(
        "uuid-drops-sequence-bits",
        "message/Uuid.scala",
        "(t << 4) | ((uuid.getLeastSignificantBits >>> 58) & 0xfL)",
        "t << 4",
        "a UUID's clock loses its 4 sequence bits: messages of one tick share a clock, and later ones are duplicates",
        (suite("UuidSuite"),),
    ),
    Mutation(
        "list-keeps-first-message",
        "client/ListResponses.scala",
        "journals ++= r.journals",
        "journals ++= r.journals.take(0)",
        "a listing streamed over several messages (25 journals each since Gazette v0.103) keeps the first only",
        (suite("ListResponsesSuite"),),
    ),
    Mutation(
        "range-rereads-last-message",
        RANGE_READER,
        "position = env.end",
        "position = env.begin",
        "a range's next range resumes at its last message's first byte: the message is in both batches",
        (suite("SourceIntegrationSuite", "read uncommitted, a large range of ndjson"),),
    ),
    Mutation(
        "batch-emits-past-end",
        RANGE_READER,
        "if (!MessageToRow.isAck(env) && env.end <= range.end && emit(env)) return true",
        "if (!MessageToRow.isAck(env) && emit(env)) return true",
        "a batch query emits, of a transaction acknowledged past its end, the messages after its end too",
        (suite("SourceIntegrationSuite", "batches over adjacent offsets"),),
    ),
    Mutation(
        "range-resumes-at-end",
        RANGE_READER,
        "endState = Some(SequencerState(resume, producers, range.revision, range.origin))",
        "endState = Some(SequencerState(range.end, producers, range.revision, range.origin))",
        "the next batch resumes at the range's end, inside the message that straddles it",
        (suite("SourceIntegrationSuite", "a stream cut into small batches"),),
    ),
    Mutation(
        "planner-range-past-head",
        "spark/source/planning/JournalRangePlanner.scala",
        "j -> (start(j) + math.min(b, share))",
        "j -> (start(j) + math.min(b, share) + 1)",
        "a capped range ends one byte later: past the write head where its share is its whole backlog",
        (suite("JournalRangePlannerSuite"),),
    ),
    Mutation(
        "source-ignores-recreation",
        "spark/source/GazetteMicroBatchStream.scala",
        "p.revision != 0 && now.revision != 0 && p.revision != now.revision",
        "false",
        "a journal deleted and created again is read at the old journal's offsets, with its states",
        (suite("SourceEdgesIntegrationSuite", "a journal deleted and re-created is not read"),),
    ),
    Mutation(
        "catalog-ignores-revision",
        "spark/source/state/SequencerStateCatalog.scala",
        "_._2.find(r => r.revision == revision && r.origin == origin)",
        "_._2.find(r => r.origin == origin)",
        "a batch may start from a state saved for an earlier journal of the same name",
        (suite("SequencerStateStoreSuite"),),
    ),
    Mutation(
        "catalog-forgets-in-memory-only",
        "spark/source/state/SequencerStateCatalog.scala",
        "if (states.nonEmpty) remember(store.forget(states), states)",
        "()",
        "a journal read afresh under its earlier entry's key finds that entry's states after a driver restart",
        (suite("SequencerStateStoreSuite"),),
    ),
    Mutation(
        "catalog-forgets-before-reading-last-batch",
        "spark/source/state/SequencerStateCatalog.scala",
        "justRan.foreach(refresh(_, again = true))",
        "()",
        "states the batch that just ran saved escape forgetting: the new entry starts from the old one's",
        (suite("SequencerStateStoreSuite"),),
    ),
    Mutation(
        "catalog-forgets-held-states-only",
        "spark/source/state/SequencerStateCatalog.scala",
        "journalFiles.getOrElseUpdate(r.journal, mutable.Set.empty) += file",
        "if (!byJournal.contains(r.journal)) journalFiles.getOrElseUpdate(r.journal, mutable.Set.empty) += file",
        "a state pruned from memory but kept in another journal's file escapes forgetting",
        (suite("SequencerStateStoreSuite"),),
    ),
    Mutation(
        "replay-counts-malformed-again",
        "message/ReadCommitted.scala",
        "ReadUncommitted(replay(journal, begin, end), OnMalformed.forReplay(onMalformed))",
        "ReadUncommitted(replay(journal, begin, end), onMalformed)",
        "malformedMessagesSkipped counts a line once more each time a replay re-reads it",
        (suite("PublisherSuite"),),
    ),
    Mutation(
        "source-vanished-journal-ignored",
        "spark/source/GazetteMicroBatchStream.scala",
        "if (options.failOnDataLoss) throw GazetteErrors.dataLoss(vanished.head, what)",
        "if (false) throw GazetteErrors.dataLoss(vanished.head, what)",
        "a journal that vanished from under a stream is dropped quietly, whatever failOnDataLoss says",
        (suite("SourceIntegrationSuite", "a journal that vanishes fails the stream"),),
    ),
    Mutation(
        "times-skip-exact-match",
        "spark/source/planning/OffsetsForTimes.scala",
        "env.clock != 0 && env.clock >= clock",
        "env.clock != 0 && env.clock > clock",
        "a starting or ending time skips the message published exactly then",
        (suite("OffsetsForTimesSuite"),),
    ),
    Mutation(
        "sink-skips-acks-of-a-journal",
        "spark/sink/SinkDriver.scala",
        ".sortBy(_._1).zipWithIndex.foreach {",
        ".sortBy(_._1).drop(1).zipWithIndex.foreach {",
        "the driver appends no ACKs to the first journal of an epoch: its rows are never committed",
        (suite("SinkIntegrationSuite", "a streaming pipeline writes every input row exactly once"),),
    ),
    Mutation(
        "sink-abort-commits-its-rows",
        DATA_WRITER,
        "publisher.ackAt(j, f, like, p.rollbackClock(publisher.producer, j))",
        "publisher.ackAt(j, f, like, clock.tick())",
        "a failed attempt's ACKs, and a failed epoch's, land above their messages: they commit what they should "
        "roll back",
        (suite("SinkIntegrationSuite", "exactly once across a failure at task-after-half"),),
    ),
    Mutation(
        "sink-producers-keep-generation",
        SINK_PRODUCERS,
        "generations = generations ++ retried.toSeq.distinct.map",
        "generations = generations ++ retried.toSeq.take(0).map",
        "a partition committed by a later attempt keeps its first attempt's producers, under which messages may be "
        "open",
        (suite("SinkProducersSuite"),),
    ),
    Mutation(
        "sink-producers-continue-another-run",
        SINK_PRODUCERS,
        "if (run == this.run) this else SinkProducers.fresh(run)",
        "this",
        "a new run of the query publishes under the producers of the run before it, which may have died mid-epoch",
        (suite("SinkProducersSuite"),),
    ),
    Mutation(
        "sink-rewrites-recorded-epoch",
        DATA_WRITER,
        "private val skip = config.intentLog.exists(l => l.open(config.hadoopConf.value).contains(l.key(epoch)))",
        "private val skip = false",
        "the writers of an epoch whose intents are recorded write its rows again",
        (suite("SinkIntegrationSuite", "exactly once across a failure at driver-after-persist"),),
    ),
    Mutation(
        "intent-log-replaces-record",
        "spark/sink/intents/AckIntentLog.scala",
        "catch { case _: FileAlreadyExistsException => false }",
        "catch { case _: FileAlreadyExistsException => true }",
        "a second driver (a zombie) recording an epoch already recorded believes its own intents were kept",
        (suite("AckIntentLogSuite"),),
    ),
    Mutation(
        "staged-run-appended-twice",
        "spark/sink/staging/StagedRuns.scala",
        "checkRegisters = Some(LabelSelector(exclude = Some(registers(Seq(run)))))",
        "checkRegisters = Some(LabelSelector(exclude = Some(registers(Seq(run))))).filter(_ => false)",
        "a staged run published again after a crash is appended again: its rows are committed twice",
        (suite("SinkIntegrationSuite", "a staged run published again after a crash is appended once"),),
    ),
    Mutation(
        "staged-run-ignores-recreation",
        "spark/sink/staging/StagedRuns.scala",
        "if (!current.exists(_.createRevision == run.revision)) {",
        "if (current.isEmpty) {",
        "a staged run recorded for a journal since deleted goes to the journal created again under its name",
        (suite("SinkIntegrationSuite", "a journal deleted and created again before its staged runs are published"),),
    ),
    Mutation(
        "sink-forgets-last-acks",
        SINK_PRODUCERS,
        "lastAcks = lastAcks ++ acks.map",
        "lastAcks = lastAcks ++ acks.take(0).map",
        "the record of an epoch forgets its ACKs: producers' clocks and rollbacks no longer follow them",
        (suite("SinkProducersSuite"),),
    ),
    Mutation(
        "sink-reuses-producers-of-lost-attempts",
        "spark/sink/SinkDriver.scala",
        "epochProducers().map(_.after(acks(messages), retried(messages)))",
        "epochProducers().map(_.after(acks(messages)))",
        "a partition's producer is used again after an attempt under it was lost: its late append is committed",
        (suite("SinkEpochsIntegrationSuite", "a task lost with its appends landing late"),),
    ),
    Mutation(
        "earliest-trusts-offset-jumps",
        "client/GazetteClient.scala",
        "j -> (if (served) at else FragmentHoles.readableFrom(this, j, offset, at))",
        "j -> at",
        "a batch from the earliest offset starts at the write head of a primary that has not listed its store",
        (suite("SourceUnlistedStoreIntegrationSuite", "a batch from the earliest offset"),),
    ),
    Mutation(
        "sink-checkpoint-optional",
        "spark/sink/config/SinkOptions.scala",
        "if (streaming && exactlyOnce && checkpoint.isEmpty)",
        "if (false && checkpoint.isEmpty)",
        "an exactly-once stream starts without a checkpointLocation for its ACK intents",
        (suite("SinkOptionsSuite"),),
    ),
    Mutation(
        "unknown-option-ignored",
        "spark/options/GazetteOptions.scala",
        "case None => throw GazetteErrors.unknownOption(k, known, sparks)",
        "case None => None",
        "a misspelled option is ignored instead of refused",
        (suite("GazetteOptionsSuite"), suite("SourceOptionsSuite")),
    ),
    Mutation(
        "stream-min-bytes-delay-restarts",
        "spark/source/GazetteMicroBatchStream.scala",
        "if (ends != from) lastBatchAt = now",
        "lastBatchAt = now",
        "with minBytesPerTrigger, each empty trigger restarts maxTriggerDelay: a trickle below it is never read",
        (suite("SourceEdgesIntegrationSuite", "minBytesPerTrigger"),),
    ),
    Mutation(
        "rebuilt-bytes-from-zero",
        RANGE_READER,
        "rebuiltBytes += resume - base.resume",
        "rebuiltBytes += resume",
        "rebuiltBytes counts from offset 0, not from the state it rebuilt from",
        (suite("SourceOptionsIntegrationSuite", "rebuiltBytes"),),
    ),
    Mutation(
        "bytes-read-counts-replays",
        RANGE_READER,
        "if (!replay) bytesRead += c.content.size()",
        "bytesRead += c.content.size()",
        "bytesRead counts replayed, rebuilt and look-ahead bytes again",
        (suite("SourceIntegrationSuite", "bytes read counts"),),
    ),
    Mutation(
        "source-ignores-uuid-pointer",
        "spark/source/reading/ReaderConfig.scala",
        "case t => Framing.forContentType(t, options.uuidPointer, options.uuidField)",
        "case t => Framing.forContentType(t)",
        "the source ignores uuidPointer and uuidField: UUIDs elsewhere go unseen, rollbacks and duplicates are emitted",
        (suite("SourceOptionsIntegrationSuite", "uuidPointer"),),
    ),
    Mutation(
        "sink-ignores-uuid-pointer",
        SINK_ROWS,
        "Framing.forContentType(ct, config.options.uuidPointer, config.options.uuidField)",
        "Framing.forContentType(ct)",
        "the sink writes UUIDs at /_meta/uuid whatever uuidPointer says: readers using it see no transactions",
        (suite("SinkIntegrationSuite", "uuidPointer"),),
    ),
    Mutation(
        "typed-json-drops-escaped-keys",
        "spark/source/rows/JsonPayloads.scala",
        "while (i < until) { if (b(i) == '\\\\') return true; i += 1 }",
        "while (i < until) { if (false) return true; i += 1 }",
        "a member whose key is escaped (us\\u0065r) is left out of the selection, though Spark reads it by its name",
        (suite("PayloadParsersSuite"),),
    ),
    Mutation(
        "typed-csv-cuts-a-column-early",
        "spark/source/rows/CsvPayloads.scala",
        "else if (c == ',' && !quoted) { n += 1; if (n == columns) return i }",
        "else if (c == ',' && !quoted) { n += 1; if (n == columns - 1) return i }",
        "a typed CSV read hands its parser the record cut before the last column it reads",
        (suite("PayloadParsersSuite"),),
    ),
    Mutation(
        "sequence-clock-follows-clocks-back",
        SEQUENCER,
        "if (clock > previous) clock else previous + 1",
        "clock",
        "a message committed after a rollback to an older ACK keeps its clock, below ones its producer committed "
        "before: real-time rows of it are dropped by readers",
        (suite("SequencerSuite", "sequence clocks grow"),),
    ),
    Mutation(
        "real-time-row-takes-its-origins-clock",
        "spark/sink/realtime/OriginUuids.scala",
        "messages.sequenceClock(at))",
        "clock)",
        "a real-time row takes its origin's clock, not its sequence clock: after a rollback to an older ACK, rows "
        "below clocks already written are dropped",
        (suite("RealTimeSinkSuite"), suite("RealTimeSinkIntegrationSuite", "rollback to an older ACK")),
    ),
    Mutation(
        "staging-late-task-leaves-its-directory",
        "spark/sink/staging/StagedRunWriter.scala",
        "if (fs.listStatus(dir).isEmpty) fs.delete(dir, false)",
        "if (false) fs.delete(dir, false)",
        "a task that staged after its write was aborted leaves the run's directory it made again",
        (suite("PlainWriteStagingIntegrationSuite", "also when a task stages after the abort"),),
    ),
    Mutation(
        "real-time-rows-of-a-message-share-a-producer",
        "spark/sink/realtime/OriginUuids.scala",
        "val k = rows",
        "val k = 0",
        "rows made from one message (explode) share a producer and a clock: readers keep the first, drop the rest",
        (suite("RealTimeSinkSuite"),),
    ),
    Mutation(
        "real-time-origin-found-in-another-journal",
        "spark/handoff/SequencedMessages.scala",
        "producers(at) == producer && clocks(at) == clock && journals(at) == journal",
        "producers(at) == producer && clocks(at) == clock",
        "a row's origin is looked for in every journal its task read: a producer's message at the same clock in "
        "another journal makes it ambiguous, and the row at least once",
        (suite("RealTimeSinkSuite"),),
    ),
    Mutation(
        "earliest-resumes-at-the-last-fragment",
        "client/FragmentHoles.scala",
        "reduceOption(_ min _)",
        "reduceOption(_ max _)",
        "where the earliest offset's fragment is gone, reading resumes at the last fragment listed, not the next one",
        (suite("FragmentHolesSuite"),),
    ),
    Mutation(
        "store-outage-grows-with-every-failure",
        STORE_HEALTH,
        "if (now < o.retryAt) o.copy(lastError = error)",
        "if (false) o.copy(lastError = error)",
        "the reads under way when a store fails each double its backoff: one outage keeps readers off it for minutes",
        (suite("StoreHealthSuite"),),
    ),
    Mutation(
        "store-admits-every-prober",
        STORE_HEALTH,
        "o.probeSince.forall(now - _ >= ProbeLease.toNanos)",
        "true",
        "once a store's backoff has passed, every reader tries it at once, not one: all wait on a store still down",
        (suite("StoreHealthSuite"),),
    ),
    Mutation(
        "reader-ignores-store-outage",
        "client/JournalReader.scala",
        "health.admit(StoreHealth.storeOf(m.fragmentUrl)) match {",
        "health.admit(StoreHealth.storeOf(m.fragmentUrl)).orElse(Some(0L)) match {",
        "a reader tries a store that just failed for each fragment, waiting on it each time, before a broker serves it",
        (suite("SourceStoreIntegrationSuite", "a store that stops answering is waited on once"),),
    ),
    Mutation(
        "framing-looks-ahead-past-a-jump",
        MESSAGE_ITERATOR,
        "val moreReady = !atEnd && beyond == null && at + (lim - pos) < writtenUntil",
        "val moreReady = !atEnd && at + (lim - pos) < writtenUntil",
        "bytes known written before an offset jump wait for more that never come: the messages before a removed "
        "fragment are reported truncated",
        (suite("FramingSuite", "bytes known written"),),
    ),
    Mutation(
        "framing-long-line-hides-the-next-reason",
        MESSAGE_ITERATOR,
        "val looked = if (moreReady) unpacker.unpack(buf, pos, lim, atEnd && !holdTail, false) else Unpacked.NeedMore",
        "val looked = Unpacked.NeedMore",
        "bytes known written and longer than the largest message are judged as a journal's end, without being looked "
        "at first: a malformed line after a long one loses its own reason",
        (suite("FramingSuite", "keeps its own reason"),),
    ),
    Mutation(
        "ndjson-waits-for-bytes-not-written",
        "message/JsonFraming.scala",
        "until - from < last && moreReady) return Unpacked.NeedMore",
        "until - from < last) return Unpacked.NeedMore",
        "a line shorter than the one before waits for more bytes even where none are known written: a live reader "
        "holds a whole message, or judges a line with the bytes after it",
        (suite("FramingSuite", "keeps its own reason"),),
    ),
    Mutation(
        "pooled-body-interrupted-before-start-is-waited-for",
        "spark/clients/TaskThreads.scala",
        "if (taken.compareAndSet(false, true)) done.countDown()",
        "()",
        "a task's thread body interrupted before a pooled thread took it is waited for to the end of join's "
        "timeout: a real-time appender closed as soon as it is made takes a second to close",
        (suite("TaskThreadsSuite", "interrupted before it started"),),
    ),
    Mutation(
        "pooled-body-runs-under-another-tasks-loader",
        "spark/clients/TaskThreads.scala",
        "thread.setContextClassLoader(loader)",
        "()",
        "a real-time task's Reads and appends run under the class loader of whichever task made their pooled "
        "thread (another session's, in Spark Connect), not their own task's",
        (suite("TaskThreadsSuite", "context class loader"),),
    ),
)
