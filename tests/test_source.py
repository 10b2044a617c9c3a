"""The source through PySpark and the assembly jar, judged by Gazette's own ReadCommittedIter."""

import glob
from pathlib import Path

import pytest

from conftest import ROOT, requires_local_binaries
from cluster import LocalCluster
import judge

pytestmark = requires_local_binaries

FRAMINGS = ["application/x-ndjson", "text/csv", "application/x-protobuf-fixed"]


def assembly_jar() -> str:
    jars = glob.glob(str(ROOT / "connector-scala/target/scala-2.13/spark-gazette-assembly-*.jar"))
    if not jars:
        pytest.fail("the assembly jar is missing: run `make assembly` (make test builds it)")
    return jars[0]


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(brokers=1) as c:
        specs = ("name: pysource/\nreplication: 1\nfragment:\n  length: 1048576\n  compression_codec: SNAPPY\n"
                 "  stores: [\"file:///\"]\n  refresh_interval: 1m0s\nchildren:\n" + "".join(
                     f"  - name: pysource/part-{i}\n    labels:\n      - name: content-type\n        value: {FRAMINGS[i]}\n"
                     for i in range(3)))
        c.apply(specs)
        for i in range(3):
            judge.publish(c.broker, f"pysource/part-{i}", seed=100 + i)
        yield c


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession
    session = (SparkSession.builder.master("local[2]").appName("test_source")
               .config("spark.jars", assembly_jar())
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .getOrCreate())
    yield session
    session.stop()


def expected(broker: str) -> set[tuple]:
    return {(r["journal"], r["begin"], r["end"], r["uuid"] or None)
            for i in range(3) for r in judge.read(broker, f"pysource/part-{i}")}


def test_stream_reads_each_committed_message_once_and_reports_bytes_behind_head(cluster, spark, tmp_path):
    df = (spark.readStream.format("gazette")
          .option("broker", cluster.broker).option("selector", "prefix=pysource/")
          .option("startingOffsets", "earliest").option("maxBytesPerTrigger", "4000")
          .load())
    query = (df.writeStream.format("memory").queryName("pysource_stream")
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(availableNow=True).start())
    query.awaitTermination()
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
        "journal", "begin", "end", "value", "uuid", "producer", "clock", "publishTime"]
    rows = {(r.journal, r.begin, r.end, r.uuid) for r in df.collect()}
    assert rows == expected(cluster.broker)


def test_unknown_option_is_named(cluster, spark):
    from pyspark.errors import PySparkException  # noqa: F401  (imported for the error types' side)
    with pytest.raises(Exception, match="Unknown Gazette option 'startingOffset'"):
        (spark.read.format("gazette").option("broker", cluster.broker)
         .option("selector", "prefix=pysource/").option("startingOffset", "earliest").load().collect())
