"""What a new user meets first: a session without the connector, a running session that cannot
take it any more, a Spark Connect client that cannot add it, options that fail where the
DataFrame is loaded, session-wide defaults, and the client's timeouts as options."""

import json
import subprocess
import sys
import textwrap

import pytest

import judge
import quickstart
from cluster import ROOT, LocalCluster, free_port
from conftest import requires_local_binaries
from specs import journal_specs

pytestmark = requires_local_binaries

NOWHERE = "http://127.0.0.1:1"


def test_a_session_without_the_connector_says_what_to_do(tmp_path):
    """In a process of its own: its first session has no connector jar."""
    job = tmp_path / "job.py"
    job.write_text(
        textwrap.dedent(f"""
        import json
        from pyspark.sql import SparkSession
        from spark_gazette import (ConnectorNotFoundError, MAVEN_COORDINATES, configure_spark_with_gazette, read_stream,
                                   write)
        spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
        errors = {{}}
        for name, attempt in [
                ("read_stream", lambda: read_stream(spark, broker={NOWHERE!r}, selector="prefix=a/")),
                ("write", lambda: write(spark.createDataFrame([("x",)], ["value"]), broker={NOWHERE!r}, journal="a")),
                ("configure_running", lambda: configure_spark_with_gazette(SparkSession.builder)),
                ("configure_connect", lambda: configure_spark_with_gazette(SparkSession.builder.remote("sc://localhost:15002")))]:
            try:
                attempt()
                errors[name] = None
            except ConnectorNotFoundError as e:
                errors[name] = str(e)
        print("RESULT " + json.dumps({{"errors": errors, "coordinates": MAVEN_COORDINATES}}))
        spark.stop()
    """)
    )
    out = subprocess.run([sys.executable, str(job)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(next(line for line in out.stdout.splitlines() if line.startswith("RESULT "))[7:])
    errors, coordinates = result["errors"], result["coordinates"]
    assert all(errors.values()), errors
    for name in ("read_stream", "write"):
        assert "DATA_SOURCE_NOT_FOUND" in errors[name] and f"--packages {coordinates}" in errors[name]
        assert "cluster" in errors[name] and "start-connect-server.sh" in errors[name]
    assert "already running" in errors["configure_running"] and "spark.stop()" in errors["configure_running"]
    assert f"--packages {coordinates}" in errors["configure_running"]
    assert (
        "start-connect-server.sh --jars" in errors["configure_connect"]
        and "sc://localhost:15002" in errors["configure_connect"]
    )


def test_options_fail_where_the_dataframe_is_loaded_not_after_start(spark):
    from pyspark.errors import IllegalArgumentException

    def reader():
        return spark.readStream.format("gazette").option("broker", NOWHERE).option("selector", "prefix=a/")

    with pytest.raises(IllegalArgumentException, match="Unknown Gazette option 'startingOffset'"):
        reader().option("startingOffset", "earliest").load()
    with pytest.raises(IllegalArgumentException, match="'maxBytesPerTrigger' has invalid value '-1'"):
        reader().option("maxBytesPerTrigger", "-1").load()
    with pytest.raises(IllegalArgumentException, match="'broker' is required"):
        spark.read.format("gazette").option("journals", "a").load()
    rows = spark.createDataFrame([("x",)], ["value"])
    with pytest.raises(IllegalArgumentException, match="Unknown Gazette option 'mappin'"):
        rows.write.format("gazette").option("broker", NOWHERE).option("journal", "a").option("mappin", "random").mode(
            "append"
        ).save()
    with pytest.raises(IllegalArgumentException, match="'deliveryGuarantee' has invalid value 'twice'"):
        rows.write.format("gazette").option("broker", NOWHERE).option("journal", "a").option(
            "deliveryGuarantee", "twice"
        ).mode("append").save()


def test_session_wide_defaults_apply_to_reads_and_writes_and_name_unknown_settings(cluster, spark):
    from pyspark.errors import IllegalArgumentException

    cluster.apply(journal_specs("defaults/", ["events"]))
    judge.publish(cluster.broker, "defaults/events", seed=41)
    want = len(judge.read(cluster.broker, "defaults/events"))
    settings = {
        "spark.datasource.gazette.broker": cluster.broker,
        "spark.datasource.gazette.startingOffsets": "earliest",  # a source's: ignored by writes
        "spark.datasource.gazette.retryTimeout": "30s",
    }
    for k, v in settings.items():
        spark.conf.set(k, v)
    try:
        assert spark.read.format("gazette").option("journals", "defaults/events").load().count() == want
        spark.createDataFrame([('{"n": 1}',)], ["value"]).write.format("gazette").option(
            "journal", "defaults/events"
        ).mode("append").save()
        assert len(judge.read(cluster.broker, "defaults/events")) == want + 1
        # A query's own option wins over the session's.
        with pytest.raises(IllegalArgumentException, match="'broker' has invalid value 'nowhere'"):
            spark.read.format("gazette").option("broker", "nowhere").option("journals", "defaults/events").load()
        spark.conf.set("spark.datasource.gazette.brokr", "x")
        with pytest.raises(IllegalArgumentException, match="spark.datasource.gazette.brokr"):
            spark.read.format("gazette").option("journals", "defaults/events").load()
        spark.conf.unset("spark.datasource.gazette.brokr")
        # Spark reads its own writer options from a query's options only: as a session default one
        # would do nothing, and is named.
        spark.conf.set(SPARK_OPTION_DEFAULT, "false")
        rows = spark.createDataFrame([('{"n": 2}',)], ["value"])
        with pytest.raises(IllegalArgumentException, match=SPARK_OPTION_DEFAULT):
            rows.write.format("gazette").option("journal", "defaults/events").mode("append").save()
    finally:
        for k in [*settings, "spark.datasource.gazette.brokr", SPARK_OPTION_DEFAULT]:
            spark.conf.unset(k)


SPARK_OPTION_DEFAULT = "spark.datasource.gazette.asyncProgressTrackingEnabled"


def test_retry_timeout_bounds_how_long_an_unreachable_broker_is_retried(spark):
    from spark_gazette import read

    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(Exception, match=r"unreachable after retrying for 1 second"):
        read(spark, broker=dead, journals="a", retry_timeout="1s", rpc_timeout="2s").count()


def test_the_readme_quick_start_runs_as_written_against_the_quickstart_cluster(tmp_path):
    """The README's Quick start, its code as printed, in a process of its own against the cluster
    `make quickstart` prepares (on a free port, not 8080): the totals it writes to rollups/ are
    the sample events' per-user sums, as Gazette's ReadCommittedIter reads them."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    for spelled in ("http://127.0.0.1:8080", "/tmp/rollups-ckpt", ".awaitTermination()"):
        assert spelled in code, f"the Quick start no longer spells {spelled!r}: adapt this test to it"
    port = free_port()
    with LocalCluster(brokers=1, port=port) as c:
        expected = quickstart.prepare(c, count=400, seed=11)
        job = tmp_path / "quick_start.py"
        job.write_text(
            code.replace("http://127.0.0.1:8080", c.broker)
            .replace("/tmp/rollups-ckpt", str(tmp_path / "ckpt"))
            # Runs until the events are rolled up, not forever.
            .replace(".awaitTermination()", ".processAllAvailable()")
        )
        run = subprocess.run([sys.executable, str(job)], capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-3000:]
        written: dict[str, int] = {}
        for journal in quickstart.ROLLUPS:
            for message in judge.read(c.broker, journal):
                row = json.loads(message["payload"])
                written[row["key"]] = row["sum(amount)"]  # update mode: a key's last row is its total
    assert written == expected
