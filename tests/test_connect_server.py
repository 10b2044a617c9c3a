"""A Spark Connect server started as its own process, as a user would start one, with the
connector's jar and its SQL extensions: a Connect client reads and writes through the helpers and
decodes protobuf with the connector's JVM decoder, called by name (`gazette_from_protobuf`)."""

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import judge
from cluster import LocalCluster, free_port, terminate
from conftest import assembly_jar, requires_local_binaries
from protos import doc_set
from specs import NDJSON, journal_specs

pytestmark = requires_local_binaries


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """`spark-submit --class SparkConnectServer --jars <connector>`: what start-connect-server.sh runs."""
    port = free_port()
    log = tmp_path_factory.mktemp("connect") / "server.log"
    submit = Path(sys.executable).parent / "spark-submit"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [
                str(submit),
                "--class",
                "org.apache.spark.sql.connect.service.SparkConnectServer",
                "--master",
                "local[2]",
                "--jars",
                assembly_jar(),
                "--conf",
                "spark.sql.extensions=io.sparkgazette.spark.GazetteExtensions",
                "--conf",
                f"spark.connect.grpc.binding.port={port}",
                "--conf",
                "spark.ui.enabled=false",
                "--conf",
                "spark.sql.shuffle.partitions=2",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        )
    try:
        deadline = time.monotonic() + 180
        while not _listening(port):
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Connect server did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        terminate(server.pid)


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_a_connect_client_reads_writes_and_decodes_protobuf_by_name(connect_server, tmp_path):
    with LocalCluster(brokers=1) as cluster:
        cluster.apply(journal_specs("served/", {"in": NDJSON, "out": NDJSON, "proto": "application/x-protobuf-fixed"}))
        judge.publish(cluster.broker, "served/in", seed=17)
        judge.publish(cluster.broker, "served/proto", seed=18)
        want = {(r["journal"], r["begin"]) for r in judge.read(cluster.broker, "served/in")}
        want_proto = {r["begin"] for r in judge.read(cluster.broker, "served/proto")}
        desc = tmp_path / "doc.desc"
        desc.write_bytes(doc_set().SerializeToString())
        job = tmp_path / "job.py"
        job.write_text(
            textwrap.dedent(f"""
            import json, uuid
            from pyspark.sql import SparkSession
            from spark_gazette import parse_json, parse_protobuf, read, read_stream, write_stream
            spark = SparkSession.builder.remote({connect_server!r}).getOrCreate()
            b = {cluster.broker!r}
            q = (write_stream(read_stream(spark, broker=b, journals="served/in", starting_offsets="earliest")
                              .selectExpr("journal AS src", "begin"),
                              broker=b, journal="served/out", checkpoint_location={str(tmp_path / "ckpt")!r})
                 .trigger(availableNow=True).start())
            assert q.awaitTermination(600), "the query did not end within 10 minutes"
            rows = (parse_json(read(spark, broker=b, journals="served/out"), "src STRING, begin LONG")
                    .select("message.*").collect())
            docs = parse_protobuf(read(spark, broker=b, journals="served/proto"), "judge.Doc", {str(desc)!r},
                                  engine="sql", into="m")
            decoded = [[r.begin, r.uuid, str(uuid.UUID(bytes=bytes(r.m.uuid))) if r.m.uuid else None, r.m.name]
                       for r in docs.collect()]
            try:
                spark.sql("SELECT gazette_from_protobuf(CAST('x' AS BINARY), 'no.Such', {str(desc)!r})").collect()
                refusal = None
            except Exception as e:
                refusal = str(e)
            print("RESULT " + json.dumps({{"session": type(spark).__module__, "rows": [[r.src, r.begin] for r in rows],
                                           "decoded": decoded, "refusal": refusal}}))
            spark.stop()
        """)
        )
        out = subprocess.run([sys.executable, str(job)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert out.returncode == 0, out.stderr[-3000:]
        result = json.loads(next(line for line in out.stdout.splitlines() if line.startswith("RESULT "))[7:])
        assert result["session"].startswith("pyspark.sql.connect")
        rows = [tuple(r) for r in result["rows"]]
        assert len(rows) == len(set(rows)) and set(rows) == want
        decoded = result["decoded"]
        assert {begin for begin, _, _, _ in decoded} == want_proto and len(decoded) == len(want_proto)
        assert all(row_uuid == field_uuid and name for _, row_uuid, field_uuid, name in decoded)
        assert any(row_uuid is not None for _, row_uuid, _, _ in decoded)
        assert result["refusal"] and "has no message 'no.Such'" in result["refusal"]
