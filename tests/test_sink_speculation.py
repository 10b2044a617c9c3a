"""The sink on a real Spark standalone cluster (a master and two workers on different loopback
hosts), with speculation on, a slow task in every epoch and injected task failures: each row is
committed once, as Gazette's ReadCommittedIter sees it, and the output's producers are bounded by
the query's parallelism and its later attempts, not its epochs."""

import json
import sys
import time
import urllib.request

import pytest

import judge
from cluster import LocalCluster, free_port
from conftest import assembly_jar, requires_local_binaries
from spark_standalone import SparkStandalone
from specs import journal_specs

pytestmark = requires_local_binaries

EPOCHS, ROWS, PARTITIONS = 6, 100, 4


@pytest.fixture(scope="module")
def gazette():
    with LocalCluster(brokers=1) as c:
        yield c


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    with SparkStandalone(workers=2) as standalone:
        ui = free_port()
        session = (
            SparkSession.builder.master(standalone.master)
            .appName("test_sink_speculation")
            .config("spark.jars", assembly_jar())
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.pyspark.python", sys.executable)
            .config("spark.executor.memory", "1g")
            .config("spark.cores.max", "2")
            .config("spark.ui.enabled", "true")
            .config("spark.ui.port", str(ui))
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.speculation", "true")
            .config("spark.speculation.interval", "100ms")
            .config("spark.speculation.quantile", "0.5")
            .config("spark.speculation.multiplier", "1.5")
            .config("spark.speculation.minTaskRuntime", "200ms")
            .config("spark.task.maxFailures", "4")
            .getOrCreate()
        )
        session.sparkContext.setLogLevel("ERROR")
        session.ui_port = ui
        yield session
        session.stop()


def tasks(spark) -> list:
    base = f"http://127.0.0.1:{spark.ui_port}/api/v1/applications/{spark.sparkContext.applicationId}"
    with urllib.request.urlopen(f"{base}/stages?details=true", timeout=10) as r:
        stages = json.loads(r.read())
    return [t for s in stages for t in (s.get("tasks") or {}).values()]


def speculative_tasks(spark) -> int:
    return sum(1 for t in tasks(spark) if t.get("speculative"))


def later_attempts(spark) -> int:
    """Attempts other than their partition's first: retries and speculative copies."""
    return sum(1 for t in tasks(spark) if t.get("speculative") or t.get("attempt", 0) > 0)


@pytest.mark.parametrize("reader_ring_size", [8192, 16], ids=["appended", "staged"])
def test_speculation_and_task_failures_write_each_row_once_with_bounded_producers(
    gazette, spark, tmp_path, reader_ring_size
):
    from pyspark.sql.functions import udf

    prefix = f"pyspec/{reader_ring_size}/"
    gazette.apply(journal_specs(prefix, ["part-0"]))
    inputs = tmp_path / "in"
    inputs.mkdir()
    for e in range(EPOCHS):
        (inputs / f"{e:03d}.txt").write_text("".join(f"{e * ROWS + i}\n" for i in range(ROWS)))

    @udf("string")
    def slow_once(n):
        # The first attempt of partition 1 in every stage stalls, once: speculation copies it to
        # the other worker, whose copy commits while the first attempt still runs.
        from pyspark import TaskContext

        tc = TaskContext.get()
        key = (tc.stageId(), tc.partitionId(), tc.attemptNumber())
        stalled = globals().setdefault("_stalled", set())
        if tc.partitionId() == 1 and tc.attemptNumber() == 0 and key not in stalled:
            stalled.add(key)
            time.sleep(2)
        return f'{{"n":{n}}}'

    stream = (
        spark.readStream.schema("n STRING")
        .option("maxFilesPerTrigger", 1)
        .csv(str(inputs))
        .repartition(PARTITIONS)
        .select(slow_once("n").alias("value"))
    )
    query = (
        stream.writeStream.format("gazette")
        .option("broker", gazette.broker)
        .option("journal", f"{prefix}part-0")
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .option("readerRingSize", str(reader_ring_size))
        .option("test.sinkFault", "task-after-half:1/3")  # partition 0's first attempt fails in epochs 1 and 4
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(600), "the query did not end within 10 minutes"

    committed = [json.loads(r["payload"])["n"] for r in judge.read(gazette.broker, f"{prefix}part-0")]
    assert sorted(committed) == list(range(EPOCHS * ROWS))
    producers = {r["uuid"][-12:] for r in judge.read(gazette.broker, f"{prefix}part-0", committed=False)}
    # Partitions × epoch parities for first attempts, and three for each later attempt (its own,
    # and its partition's next generation of first attempts' two): never one per task and epoch.
    later = later_attempts(spark)
    assert len(producers) <= PARTITIONS * 2 + 3 * later, f"{len(producers)} producers, {later} later attempts"
    assert speculative_tasks(spark) >= 1, "speculation never copied a task"
