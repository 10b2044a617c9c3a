"""Representative source, sink and protobuf tests again, on a Spark standalone cluster (a master
and two workers from the pyspark package, each executor its own JVM; checkpoints on a path all
of them see) instead of local mode: what crosses process boundaries (partitions, offsets, the
sink's commit messages, Python workers) has to."""

import os
import sys
import time

import pytest

import judge
import test_protobuf
import test_sink
import test_source
from cluster import LocalCluster
from conftest import assembly_jar, requires_local_binaries
from spark_standalone import SparkStandalone
from specs import journal_specs
from test_protobuf import published  # noqa: F401  (a fixture, on this module's cluster and session)

pytestmark = requires_local_binaries


@pytest.fixture(scope="module")
def cluster():
    """The journals test_source's and test_sink's tests read."""
    with LocalCluster(brokers=1) as c:
        c.apply(journal_specs("pysource/", {f"part-{i}": ct for i, ct in enumerate(test_source.FRAMINGS)}))
        c.apply(test_sink.specs("pysink/in/", 2))
        for i in range(3):
            judge.publish(c.broker, f"pysource/part-{i}", seed=100 + i)
        for i in range(2):
            judge.publish(c.broker, f"pysink/in/part-{i}", seed=200 + i)
        yield c


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    with SparkStandalone(workers=2) as standalone:
        builder = (
            SparkSession.builder.master(standalone.master)
            .appName("test_standalone")
            .config("spark.jars", assembly_jar())
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.pyspark.python", sys.executable)
            .config("spark.executor.memory", "512m")
            .config("spark.cores.max", "2")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            # Kryo, as many clusters run: whatever is broadcast travels with it, not with Java's.
            .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        )
        if os.environ.get("PYTHONPATH"):  # the Python workers import spark_gazette as the tests do
            builder = builder.config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("ERROR")
        deadline = time.monotonic() + 120
        while len(standalone.executor_pids()) < 2:  # one executor JVM on each worker
            assert time.monotonic() < deadline, "the workers did not start two executors"
            time.sleep(0.5)
        yield session
        session.stop()


def test_source_reads_each_committed_message_once(cluster, spark, tmp_path):
    test_source.test_stream_reads_each_committed_message_once_and_reports_bytes_behind_head(cluster, spark, tmp_path)


def test_sink_is_exactly_once_across_a_driver_failure_and_a_restart(cluster, spark, tmp_path):
    test_sink.test_exactly_once_across_a_failure_and_a_restart_from_the_checkpoint(
        cluster, spark, tmp_path, "driver-after-some-acks"
    )


def test_sink_is_exactly_once_across_a_task_failure(cluster, spark, tmp_path):
    test_sink.test_exactly_once_across_a_failure_and_a_restart_from_the_checkpoint(
        cluster, spark, tmp_path, "task-after-half"
    )


def test_a_plain_batch_write_stages_its_large_runs_where_every_executor_sees_them(cluster, spark, tmp_path):
    # A standalone cluster's default file system is each host's own disk: a plain write stages
    # only under a stagingLocation every host sees (here, a path of the one machine).
    test_sink.test_a_plain_batch_write_larger_than_readers_rings_costs_them_no_more_read_committed(
        cluster, spark, staging_location=str(tmp_path / "staging")
    )


def test_protobuf_engines_agree_on_executors(cluster, spark, published):  # noqa: F811
    test_protobuf.test_the_jvm_and_python_engines_give_the_same_schema_and_rows(cluster, spark, published)
