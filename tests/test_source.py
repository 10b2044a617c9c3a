"""The source through PySpark and the assembly jar, judged by Gazette's own ReadCommittedIter."""

import pytest

from conftest import requires_local_binaries
from cluster import LocalCluster
from specs import journal_specs
import judge

pytestmark = requires_local_binaries

FRAMINGS = ["application/x-ndjson", "text/csv", "application/x-protobuf-fixed"]


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(brokers=1) as c:
        c.apply(journal_specs("pysource/", {f"part-{i}": FRAMINGS[i] for i in range(3)}))
        for i in range(3):
            judge.publish(c.broker, f"pysource/part-{i}", seed=100 + i)
        yield c


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
