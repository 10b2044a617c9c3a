"""The Python package as users meet it: pip-installed with the connector jar inside, the
configure function, the options-only helpers, the admin helpers, and the Maven coordinates
through `spark-submit --packages`."""

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

import judge
from conftest import option_error, requires_local_binaries
from specs import journal_specs

pytestmark = requires_local_binaries

# Applied through spark_gazette.admin as YAML text, as users write it.
SPECS = journal_specs(
    "pkg/",
    ["in/part-0", "in/part-1", "out/part-0", "out/part-1", "admin/part-0"],
    child_labels={"admin/part-0": {"team": "data"}},
)


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    from spark_gazette import configure_spark_with_gazette

    session = configure_spark_with_gazette(
        SparkSession.builder.master("local[2]")
        .appName("test_python_package")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
    ).getOrCreate()
    yield session
    session.stop()


def test_the_installed_package_bundles_the_connector_jar():
    import spark_gazette

    jar = Path(spark_gazette.jar_path())
    assert jar.exists() and jar.stat().st_size > 1_000_000
    assert "site-packages" in str(jar), "the package should be installed, not imported from the source tree"


def test_admin_helpers_apply_list_and_publish(cluster, spark):
    from spark_gazette import admin

    names = admin.apply_specs(spark, cluster.broker, SPECS)
    assert "pkg/admin/part-0" in names and len(names) == 5
    head = admin.publish(spark, cluster.broker, "pkg/admin/part-0", [{"n": i} for i in range(10)])
    listed = {j["name"]: j for j in admin.list_journals(spark, cluster.broker, "prefix=pkg/")}
    assert listed["pkg/admin/part-0"]["writeHead"] == head > 0
    assert listed["pkg/admin/part-0"]["labels"]["team"] == ["data"]
    assert listed["pkg/admin/part-0"]["labels"]["content-type"] == ["application/x-ndjson"]
    got = judge.read(cluster.broker, "pkg/admin/part-0")
    assert [json.loads(r["payload"])["n"] for r in got] == list(range(10))
    assert all(r["flags"] == 0 and r["uuid"] for r in got)


def test_helpers_read_and_write_exactly_once(cluster, spark, tmp_path):
    from spark_gazette import admin, parse_json, read, read_stream, write, write_stream

    admin.apply_specs(spark, cluster.broker, SPECS)
    for i in range(2):
        judge.publish(cluster.broker, f"pkg/in/part-{i}", seed=300 + i)
    want = {(r["journal"], r["begin"]) for i in range(2) for r in judge.read(cluster.broker, f"pkg/in/part-{i}")}

    events = read_stream(
        spark, broker=cluster.broker, selector="prefix=pkg/in/", starting_offsets="earliest", max_bytes_per_trigger=4000
    )
    query = (
        write_stream(
            events.selectExpr("journal AS src", "begin", "journal AS key"),
            broker=cluster.broker,
            selector="prefix=pkg/out/",
            checkpoint_location=str(tmp_path / "ckpt"),
        )
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(600), "the query did not end within 10 minutes"

    # What the sink committed, as Gazette's ReadCommittedIter reads it: each input message once.
    written = Counter(
        (m["src"], m["begin"])
        for i in range(2)
        for m in (json.loads(r["payload"]) for r in judge.read(cluster.broker, f"pkg/out/part-{i}"))
    )
    assert written == Counter(want), {"missing": Counter(want) - written, "extra": written - Counter(want)}
    out = parse_json(read(spark, broker=cluster.broker, selector="prefix=pkg/out/"), "src STRING, begin LONG")
    rows = Counter((r.message.src, r.message.begin) for r in out.select("message").collect())
    assert rows == written, {"missing": written - rows, "extra": rows - written}

    write(
        spark.createDataFrame([("x",)], ["value"]).selectExpr("to_json(named_struct('v', value)) AS value"),
        broker=cluster.broker,
        journal="pkg/out/part-0",
    )
    assert [json.loads(r["payload"]).get("v") for r in judge.read(cluster.broker, "pkg/out/part-0")].count("x") == 1


def test_helpers_leave_values_to_the_connector_which_names_the_option(spark):
    """The helpers only convert: every value is checked once, by the connector, where the
    DataFrame is loaded (no broker is contacted), and its error names the option as documented."""
    from spark_gazette import read, read_stream, write_stream

    nowhere = "http://127.0.0.1:1"
    option_error(lambda: read_stream(spark, broker=nowhere), "GAZETTE_MISSING_OPTION", "selector")
    option_error(
        lambda: read(spark, broker=nowhere, selector="prefix=x/", journals=["a"]),
        "GAZETTE_CONFLICTING_OPTIONS",
        "journals",
    )
    option_error(
        lambda: read_stream(spark, broker="b:1", selector="prefix=x/"), "GAZETTE_INVALID_OPTION", "broker", "b:1"
    )
    option_error(
        lambda: read_stream(spark, broker=nowhere, selector="prefix=x/", max_bytes_per_trigger=-1),
        "GAZETTE_INVALID_OPTION",
        "maxBytesPerTrigger",
        "-1",
    )
    option_error(
        lambda: read_stream(spark, broker=nowhere, journals=["a"], starting_offsets={"a": -3}),
        "GAZETTE_INVALID_OPTION",
        "startingOffsets",
        '{"a": -3}',
    )
    option_error(
        lambda: read_stream(spark, broker=nowhere, journals=["a"], starting_timestamp=-1),
        "GAZETTE_INVALID_OPTION",
        "startingTimestamp",
        "-1",
    )
    option_error(
        lambda: read_stream(spark, broker=nowhere, journals=["a"], starting_offsets_by_timestamp_strategy="earliest"),
        "GAZETTE_INVALID_OPTION",
        "startingOffsetsByTimestampStrategy",
        "earliest",
    )
    option_error(
        lambda: read(spark, broker=nowhere, journals=["a"], cert_file="/client.pem"),
        "GAZETTE_MISSING_OPTION",
        "certKeyFile",
    )
    rows = spark.readStream.format("rate").load().selectExpr("CAST(value AS STRING) AS value")
    option_error(
        lambda: write_stream(rows, broker=nowhere, selector="prefix=a/", mapping="hash", checkpoint_location="/c"),
        "GAZETTE_INVALID_OPTION",
        "mapping",
        "hash",
    )


def test_a_naive_datetime_is_refused_in_python_before_spark_is_asked():
    """A datetime without a time zone names no instant; the connector never sees datetimes."""
    from spark_gazette import read_stream

    with pytest.raises(TypeError, match="starting_timestamp: a naive datetime"):
        read_stream(None, broker="http://b:1", journals=["a"], starting_timestamp=datetime(2026, 1, 1))


def test_an_exactly_once_stream_without_its_own_checkpoint_location_is_refused_by_the_connector(spark, tmp_path):
    """Spark gives the sink no session-wide checkpoint location, so the connector needs the
    query's own: the sink says so where write_stream is called, and, for a writer made without
    the helper, when the query runs."""
    from pyspark.errors import StreamingQueryException

    from spark_gazette import write_stream

    rows = spark.readStream.format("rate").load().selectExpr("CAST(value AS STRING) AS value")
    spark.conf.set("spark.sql.streaming.checkpointLocation", str(tmp_path / "session-ckpt"))
    query = None
    try:
        option_error(
            lambda: write_stream(rows, broker="http://127.0.0.1:1", journal="a"),
            "GAZETTE_MISSING_OPTION",
            "checkpointLocation",
        )
        query = rows.writeStream.format("gazette").options(broker="http://127.0.0.1:1", journal="a").start()
        with pytest.raises(StreamingQueryException) as e:
            query.awaitTermination(120)
        assert "[GAZETTE_MISSING_OPTION]" in str(e.value) and "'checkpointLocation'" in str(e.value)
    finally:
        if query is not None:
            query.stop()
        spark.conf.unset("spark.sql.streaming.checkpointLocation")


def test_write_stream_checks_the_sinks_options_with_the_sessions_defaults(spark, tmp_path):
    """The sink checks a stream's options where write_stream is called, without a load: with the
    session's spark.datasource.gazette.* defaults, as the query will see them, and refusing a
    source's option (which no name-based guess turns into a read any more)."""
    from spark_gazette import write_stream

    rows = spark.readStream.format("rate").load().selectExpr("CAST(value AS STRING) AS value")
    spark.conf.set("spark.datasource.gazette.broker", "http://127.0.0.1:1")
    try:
        assert write_stream(rows, journal="a", checkpoint_location=str(tmp_path)) is not None
        option_error(
            lambda: write_stream(rows, journal="a", checkpoint_location=str(tmp_path), mapping="hash"),
            "GAZETTE_INVALID_OPTION",
            "mapping",
            "hash",
        )
        option_error(
            lambda: write_stream(rows, selector="prefix=a/", checkpoint_location=str(tmp_path), startingOffsets="x"),
            "GAZETTE_UNKNOWN_OPTION",
            "startingOffsets",
        )
    finally:
        spark.conf.unset("spark.datasource.gazette.broker")


def test_the_package_has_no_import_cycle_not_even_inside_a_function():
    """Each module of the package imports only modules that do not import it back, counting the
    imports inside functions, which would otherwise hide a cycle until the function runs."""
    import ast

    import spark_gazette

    root = Path(spark_gazette.__file__).parent
    modules = {".".join(("spark_gazette", *p.relative_to(root).with_suffix("").parts)): p for p in root.rglob("*.py")}
    modules = {m.removesuffix(".__init__"): p for m, p in modules.items()}
    imports = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("spark_gazette"):
                found |= {
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                    for a in node.names
                }
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("spark_gazette")}
        imports[name] = {m for m in found if m in modules and m != name and m != "spark_gazette"}
    assert {"spark_gazette.helpers", "spark_gazette._declaration"} <= modules.keys(), sorted(modules)

    def reaches(start, goal, seen=()):
        return any(m == goal or (m not in seen and reaches(m, goal, (*seen, m))) for m in imports[start])

    cycles = sorted(m for m in imports if reaches(m, m))
    assert not cycles, {m: sorted(imports[m]) for m in cycles}


def test_every_error_a_public_function_raises_is_exported():
    import spark_gazette
    from spark_gazette.spark_line import UnsupportedSparkError

    assert spark_gazette.UnsupportedSparkError is UnsupportedSparkError
    assert {"UnsupportedSparkError", "ConnectorNotFoundError"} <= set(spark_gazette.__all__)


def test_spark_submit_packages_resolves_the_connector_from_the_local_maven_repository(cluster, spark, tmp_path):
    from spark_gazette import MAVEN_COORDINATES, admin

    admin.apply_specs(spark, cluster.broker, SPECS)
    admin.publish(spark, cluster.broker, "pkg/admin/part-0", [{"submitted": True}])
    job = tmp_path / "job.py"
    job.write_text(
        textwrap.dedent(f"""
        from pyspark.sql import SparkSession
        spark = SparkSession.builder.master("local[1]").getOrCreate()
        n = (spark.read.format("gazette").option("broker", {cluster.broker!r}).option("journals", "pkg/admin/part-0")
             .load().count())
        print("MESSAGES", n)
        spark.stop()
    """)
    )
    submit = Path(sys.executable).parent / "spark-submit"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    out = subprocess.run(
        [str(submit), "--packages", MAVEN_COORDINATES, "--conf", f"spark.jars.ivy={tmp_path / 'ivy'}", str(job)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    count = int(next(line for line in out.stdout.splitlines() if line.startswith("MESSAGES")).split()[1])
    assert count == len(judge.read(cluster.broker, "pkg/admin/part-0", committed=False))
    group, artifact, version = MAVEN_COORDINATES.split(":")
    assert (tmp_path / "ivy" / "jars" / f"{group}_{artifact}-{version}.jar").exists()


def test_the_assembly_holds_only_our_own_classes():
    """Everything bundled is relocated under io/sparkgazette/, so no class of ours can meet a
    different version of itself in Spark or a user's jars (Spark Connect's gRPC server runs next
    to it in test_spark_connect.py). The Spark 3.5 build adds one class in Spark's own package, the
    way to Spark 3.5's JSONOptions, which only Spark's SQL packages may name."""
    import zipfile

    from spark_gazette import jar_path

    names = zipfile.ZipFile(jar_path()).namelist()
    outside = [n for n in names if not n.endswith("/") and not n.startswith(("io/sparkgazette/", "META-INF/"))]
    assert all(n.startswith("org/apache/spark/sql/catalyst/json/GazetteJsonOptions") for n in outside), outside
    assert bool(outside) == Path(jar_path()).name.startswith("spark-gazette-3.5_")
    assert any(n.startswith("io/sparkgazette/shaded/io/grpc/") for n in names)
    assert any(n.startswith("io/sparkgazette/shaded/com/google/protobuf/") for n in names)
    services = [n for n in names if n.startswith("META-INF/services/")]
    assert "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister" in services
    # Service files name relocated classes too.
    for s in services:
        assert all(
            line.startswith("io.sparkgazette.")
            for line in zipfile.ZipFile(jar_path()).read(s).decode().split()
            if line and not line.startswith("#")
        ), s


def test_the_assembly_reads_over_netty_s_native_epoll_transport_on_linux(spark):
    """netty finds its native transport by a library name that follows its package, which the
    assembly moves under ours: the library must move with it, or every Read falls back to the
    JDK's NIO transport."""
    import platform

    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip("netty's epoll transport is built for Linux on x86_64 and aarch64")
    epoll = spark.sparkContext._jvm.io.sparkgazette.shaded.io.grpc.netty.shaded.io.netty.channel.epoll.Epoll
    assert epoll.isAvailable(), str(epoll.unavailabilityCause())
