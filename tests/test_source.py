"""The source through PySpark and the assembly jar, judged by Gazette's own ReadCommittedIter."""

import json

import pytest

import judge
from cluster import LocalCluster
from conftest import requires_local_binaries
from messages import gazette_clock
from specs import journal_specs

pytestmark = requires_local_binaries

GREGORIAN_TO_UNIX = 122_192_928_000_000_000  # 100 ns units from 1582-10-15 to 1970-01-01

FRAMINGS = ["application/x-ndjson", "text/csv", "application/x-protobuf-fixed"]


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(brokers=1) as c:
        c.apply(journal_specs("pysource/", {f"part-{i}": FRAMINGS[i] for i in range(3)}))
        for i in range(3):
            judge.publish(c.broker, f"pysource/part-{i}", seed=100 + i)
        yield c


def expected(broker: str) -> set[tuple]:
    return {
        (r["journal"], r["begin"], r["end"], r["uuid"] or None)
        for i in range(3)
        for r in judge.read(broker, f"pysource/part-{i}")
    }


def test_stream_reads_each_committed_message_once_and_reports_bytes_behind_head(cluster, spark, tmp_path):
    df = (
        spark.readStream.format("gazette")
        .option("broker", cluster.broker)
        .option("selector", "prefix=pysource/")
        .option("startingOffsets", "earliest")
        .option("maxBytesPerTrigger", "4000")
        .load()
    )
    query = (
        df.writeStream.format("memory")
        .queryName("pysource_stream")
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(600), "the query did not end within 10 minutes"
    rows = [(r.journal, r.begin, r.end, r.uuid) for r in spark.table("pysource_stream").collect()]
    want = expected(cluster.broker)
    assert len(rows) == len(set(rows)), "a message was emitted twice"
    assert set(rows) == want
    progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
    assert len(progress) > 3, "maxBytesPerTrigger should have cut several batches"
    metrics = query.recentProgress[-1]["sources"][0]["metrics"]
    assert metrics["bytesBehindHead"] == "0" and metrics["journals"] == "3"
    assert int(progress[0]["sources"][0]["metrics"]["maxBytesBehindHead"]) > 0


def test_batch_read_equals_gazette_and_has_the_documented_schema(cluster, spark):
    df = spark.read.format("gazette").option("broker", cluster.broker).option("selector", "prefix=pysource/").load()
    assert [f.name for f in df.schema.fields] == [
        "journal",
        "begin",
        "end",
        "value",
        "uuid",
        "producer",
        "clock",
        "publishTime",
    ]
    rows = [(r.journal, r.begin, r.end, r.uuid) for r in df.collect()]
    assert len(rows) == len(set(rows)), "a message was emitted twice"
    assert set(rows) == expected(cluster.broker)


def parsed(framing: str, payload: str) -> tuple:
    """The test's own parse of a message the judge prints: (seq, producer)."""
    if framing == "application/x-ndjson":
        doc = json.loads(payload)
        return doc.get("seq"), doc.get("producer")
    seq, producer, _ = payload.split(",")  # the CSV fields after the UUID
    return int(seq), producer


@pytest.mark.parametrize("part", [0, 1])
def test_schema_keyword_parses_each_message_as_gazettes_reader_reads_it(cluster, spark, part):
    from spark_gazette import read

    journal = f"pysource/part-{part}"
    df = read(spark, broker=cluster.broker, journals=journal, schema="seq LONG, producer STRING, pad STRING")
    rows = {(r.begin, r.seq, r.producer) for r in df.select("seq", "producer", "_gazette.begin").collect()}
    want = {(r["begin"], *parsed(FRAMINGS[part], r["payload"])) for r in judge.read(cluster.broker, journal)}
    assert rows == want and len(want) > 10


def test_protobuf_keywords_decode_in_the_scan_as_the_test_decodes_gazettes_messages(cluster, spark, tmp_path):
    from google.protobuf import descriptor_pool, message_factory

    from protos import doc_set
    from spark_gazette import read

    descriptor = tmp_path / "doc.desc"
    descriptor.write_bytes(doc_set().SerializeToString())
    df = read(
        spark,
        broker=cluster.broker,
        journals="pysource/part-2",
        protobuf_message="judge.Doc",
        protobuf_descriptor_file=str(descriptor),
    )
    assert df.schema.fieldNames() == ["uuid", "name", "pad", "_gazette"]
    rows = {(r.begin, r.name, r.pad) for r in df.select("_gazette.begin", "name", "pad").collect()}
    pool = descriptor_pool.DescriptorPool()
    for f in doc_set().file:
        pool.Add(f)
    doc = message_factory.GetMessageClass(pool.FindMessageTypeByName("judge.Doc"))
    want = set()
    for r in judge.read(cluster.broker, "pysource/part-2"):
        m = doc.FromString(bytes.fromhex(r["payload"]))
        want.add((r["begin"], m.name, m.pad))
    assert rows == want and len(want) > 10


def test_batch_read_by_time_starts_at_the_first_message_published_at_or_after_it(cluster, spark):
    from spark_gazette import read

    journal = "pysource/part-0"
    # Every message as Gazette's ReadUncommittedIter reads it, acknowledgements included, as the
    # source reads uncommitted.
    every = sorted((r["begin"], gazette_clock(r["uuid"])) for r in judge.read(cluster.broker, journal, committed=False))
    timed = [c for _, c in every if c]
    t = ((timed[len(timed) // 2] >> 4) - GREGORIAN_TO_UNIX) // 10_000  # a publish time, in ms
    at = (t * 10_000 + GREGORIAN_TO_UNIX) << 4
    first = next(b for b, c in every if c and c >= at)
    rows = read(spark, broker=cluster.broker, journals=journal, read_committed=False, starting_timestamp=t).collect()
    assert sorted(r.begin for r in rows) == [b for b, _ in every if b >= first]
    later = ((max(timed) >> 4) - GREGORIAN_TO_UNIX) // 10_000 + 1  # after every message: nothing, with "latest"
    assert (
        read(
            spark,
            broker=cluster.broker,
            journals=journal,
            starting_offsets_by_timestamp={journal: later},
            starting_offsets_by_timestamp_strategy="latest",
        ).count()
        == 0
    )


def test_unknown_option_is_named(cluster, spark):
    from pyspark.errors import PySparkException  # noqa: F401  (imported for the error types' side)

    with pytest.raises(Exception, match="Unknown Gazette option 'startingOffset'"):
        (
            spark.read.format("gazette")
            .option("broker", cluster.broker)
            .option("selector", "prefix=pysource/")
            .option("startingOffset", "earliest")
            .load()
            .collect()
        )


def test_foreach_batch_into_parquet_overwriting_each_batch_is_exactly_once_across_a_failed_batch(
    cluster, spark, tmp_path
):
    """docs/source.md's foreachBatch example: each micro-batch overwrites its own directory, so a
    batch Spark runs again after a failure (here, one that fails after writing) replaces its first
    attempt's files instead of adding to them."""
    out, marker = str(tmp_path / "parquet"), tmp_path / "failed-once"

    def write(batch, batch_id):
        batch.select("journal", "begin", "end", "uuid").write.mode("overwrite").parquet(f"{out}/batch_id={batch_id}")
        if batch_id == 2 and not marker.exists():
            marker.touch()
            raise RuntimeError("the batch fails after its files are written")

    def run():
        return (
            spark.readStream.format("gazette")
            .option("broker", cluster.broker)
            .option("selector", "prefix=pysource/")
            .option("startingOffsets", "earliest")
            .option("maxBytesPerTrigger", "4000")
            .load()
            .writeStream.foreachBatch(write)
            .option("checkpointLocation", str(tmp_path / "ckpt"))
            .trigger(availableNow=True)
            .start()
        )

    first = run()
    with pytest.raises(Exception, match="the batch fails after its files are written"):
        first.awaitTermination(600)
    assert marker.exists()
    assert run().awaitTermination(600), "the query did not end within 10 minutes"
    rows = [(r.journal, r.begin, r.end, r.uuid) for r in spark.read.parquet(out).collect()]
    assert len(rows) == len(set(rows)), "a message was written twice"
    assert set(rows) == expected(cluster.broker)
