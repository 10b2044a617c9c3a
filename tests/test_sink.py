"""The sink through PySpark and the assembly jar: Gazette → Spark → Gazette exactly once, judged
by Gazette's own ReadCommittedIter on the output journals."""

import json
import re
from pathlib import Path

import pytest

import judge
from cluster import LocalCluster
from conftest import local_spark, option_error, requires_local_binaries
from specs import journal_specs

pytestmark = requires_local_binaries


# The sink's test hook: a failure injected at a chosen point of its protocol (sink/SinkFault.scala).
SINK_FAULT = "test.sinkFault"


def specs(prefix: str, n: int) -> str:
    return journal_specs(prefix, [f"part-{i}" for i in range(n)])


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(brokers=1) as c:
        c.apply(specs("pysink/in/", 2))
        for i in range(2):
            judge.publish(c.broker, f"pysink/in/part-{i}", seed=200 + i)
        yield c


@pytest.fixture(scope="module")
def spark():
    session = local_spark("test_sink", master="local[2,2]")  # a second attempt per task
    yield session
    session.stop()


def expected(broker: str) -> set[tuple]:
    return {(r["journal"], r["begin"]) for i in range(2) for r in judge.read(broker, f"pysink/in/part-{i}")}


def committed_output(cluster, prefix: str, n: int) -> list[tuple]:
    out = []
    for i in range(n):
        for r in judge.read(cluster.broker, f"{prefix}part-{i}"):
            doc = json.loads(r["payload"])
            out.append((doc["src"], doc["begin"]))
    return out


def pipeline(spark, cluster, out_prefix: str, checkpoint: str, **extra):
    from pyspark.sql.functions import col

    stream = (
        spark.readStream.format("gazette")
        .option("broker", cluster.broker)
        .option("selector", "prefix=pysink/in/")
        .option("startingOffsets", "earliest")
        .option("maxBytesPerTrigger", "3000")
        .load()
        .select(col("journal").alias("src"), "begin", col("journal").alias("key"))
    )
    writer = (
        stream.writeStream.format("gazette")
        .option("broker", cluster.broker)
        .option("selector", f"prefix={out_prefix}")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
    )
    for k, v in extra.items():
        writer = writer.option(k, v)
    query = writer.start()
    assert query.awaitTermination(600), "the query did not end within 10 minutes"
    return query


def test_streaming_pipeline_is_exactly_once(cluster, spark, tmp_path):
    cluster.apply(specs("pysink/out/a/", 3))
    query = pipeline(spark, cluster, "pysink/out/a/", str(tmp_path / "ckpt"))
    seen = committed_output(cluster, "pysink/out/a/", 3)
    assert len(seen) == len(set(seen))
    assert set(seen) == expected(cluster.broker)
    # The sink's metrics in the stream's progress: its rows, and every byte of the journals.
    metrics = [p["sink"]["metrics"] for p in query.recentProgress]
    assert sum(int(m["rowsWritten"]) for m in metrics) == len(seen)
    heads = [
        max((r["end"] for r in judge.read(cluster.broker, f"pysink/out/a/part-{i}", committed=False)), default=0)
        for i in range(3)
    ]
    assert sum(int(m["bytesAppended"]) for m in metrics) == sum(heads)


@pytest.mark.parametrize(
    "fault", ["task-after-half", "driver-before-persist", "driver-after-persist", "driver-after-some-acks"]
)
def test_exactly_once_across_a_failure_and_a_restart_from_the_checkpoint(cluster, spark, tmp_path, fault):
    prefix = f"pysink/out/{fault}/"
    cluster.apply(specs(prefix, 3))
    if fault == "task-after-half":
        # The task's first attempt fails after appending half its rows; its retry succeeds.
        pipeline(spark, cluster, prefix, str(tmp_path / "ckpt"), **{SINK_FAULT: f"{fault}:1"})
    else:
        with pytest.raises(Exception, match=f"injected driver failure at {fault}"):
            pipeline(spark, cluster, prefix, str(tmp_path / "ckpt"), **{SINK_FAULT: f"{fault}:1"})
        pipeline(spark, cluster, prefix, str(tmp_path / "ckpt"))
    seen = committed_output(cluster, prefix, 3)
    assert len(seen) == len(set(seen))
    assert set(seen) == expected(cluster.broker)
    # The failed attempt did write: its messages are in the journals, never acknowledged.
    written = sum(
        1 for i in range(3) for r in judge.read(cluster.broker, f"{prefix}part-{i}", committed=False) if r["flags"] == 1
    )
    if fault in ("task-after-half", "driver-before-persist"):
        assert written > len(seen)


def test_batch_writes_exactly_once_and_at_least_once(cluster, spark):
    cluster.apply(specs("pysink/out/c/", 1))
    rows = spark.createDataFrame([(json.dumps({"n": i}),) for i in range(50)], ["value"])
    rows.write.format("gazette").option("broker", cluster.broker).option("journal", "pysink/out/c/part-0").mode(
        "append"
    ).save()
    rows.write.format("gazette").option("broker", cluster.broker).option("journal", "pysink/out/c/part-0").option(
        "deliveryGuarantee", "at-least-once"
    ).mode("append").save()
    got = judge.read(cluster.broker, "pysink/out/c/part-0")
    assert sorted(json.loads(r["payload"])["n"] for r in got) == sorted(list(range(50)) * 2)
    flags = [r["flags"] for r in got]
    assert flags.count(1) == 50 and flags.count(0) == 50  # transactional, then OUTSIDE_TXN
    assert all(re.fullmatch(r"[0-9a-f-]{36}", r["uuid"]) for r in got)


def test_a_plain_batch_write_larger_than_readers_rings_costs_them_no_more_read_committed(
    cluster, spark, staging_location=None
):
    from spark_gazette import write

    # No batch id, no checkpoint: its large runs are staged under `staging_location`, or by
    # default in Spark's local directory (local mode: one host).
    cluster.apply(specs("pysink/out/plain-large/", 1))
    journal, rows = "pysink/out/plain-large/part-0", 20_000
    df = spark.range(0, rows, 1, 16).selectExpr("to_json(named_struct('n', id, 'pad', repeat('x', 1000))) AS value")
    write(df, broker=cluster.broker, journal=journal, staging_location=staging_location)
    if staging_location:
        assert not list(Path(staging_location).glob("*")), "the write left staged runs behind"
    assert sorted(json.loads(r["payload"])["n"] for r in judge.each(cluster.broker, journal)) == list(range(rows))
    committed, committed_bytes = judge.read_cost(cluster.broker, journal, committed=True)
    _, uncommitted_bytes = judge.read_cost(cluster.broker, journal, committed=False)
    assert committed == rows
    assert committed_bytes <= 1.5 * uncommitted_bytes, f"{committed_bytes / uncommitted_bytes:.2f}x read committed"


def test_batch_write_with_a_batch_id_writes_nothing_twice(cluster, spark, tmp_path):
    from spark_gazette import write

    cluster.apply(specs("pysink/out/d/", 1))
    rows = spark.createDataFrame([(json.dumps({"n": i}),) for i in range(10)], ["value"])
    checkpoint = str(tmp_path / "ckpt")
    for _ in range(2):  # a job run again under its batch id
        write(
            rows, broker=cluster.broker, journal="pysink/out/d/part-0", checkpoint_location=checkpoint, batch_id="run-1"
        )
    # Without a batch id, the same checkpoint location is a new write.
    write(rows, broker=cluster.broker, journal="pysink/out/d/part-0", checkpoint_location=checkpoint)
    got = judge.read(cluster.broker, "pysink/out/d/part-0")
    assert sorted(json.loads(r["payload"])["n"] for r in got) == sorted(list(range(10)) * 2)
    option_error(
        lambda: write(rows, broker=cluster.broker, journal="pysink/out/d/part-0", batch_id=""),
        "GAZETTE_INVALID_OPTION",
        "batchId",
        "",
    )
