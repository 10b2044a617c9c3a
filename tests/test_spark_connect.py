"""The options-only helpers through a Spark Connect session: pyspark starts a local Connect
server with the connector jar, and the client never touches the JVM. Run in a subprocess, so
that the Connect server is not the classic session of the other suites."""

import json
import subprocess
import sys
import textwrap
from collections import Counter

import judge
from cluster import LocalCluster
from conftest import ROOT, requires_local_binaries
from protos import doc_set
from specs import NDJSON, journal_specs

pytestmark = requires_local_binaries


def test_helpers_typed_rows_and_protobuf_decoding_work_under_spark_connect_and_jvm_only_calls_refuse_clearly(
    tmp_path,
):
    with LocalCluster(brokers=1) as cluster:
        cluster.apply(journal_specs("connect/", {"in": NDJSON, "out": NDJSON, "proto": "application/x-protobuf-fixed"}))
        judge.publish(cluster.broker, "connect/in", seed=7)
        judge.publish(cluster.broker, "connect/proto", seed=8)
        want = {(r["journal"], r["begin"]) for r in judge.read(cluster.broker, "connect/in")}
        want_proto = {r["begin"] for r in judge.read(cluster.broker, "connect/proto")}
        desc = tmp_path / "doc.desc"
        desc.write_bytes(doc_set().SerializeToString())
        job = tmp_path / "job.py"
        job.write_text(
            textwrap.dedent(f"""
            import json
            from pyspark.sql import SparkSession
            import uuid
            from spark_gazette import (admin, configure_spark_with_gazette, parse_json, parse_protobuf, read,
                                       read_stream, write_stream)
            spark = configure_spark_with_gazette(SparkSession.builder.remote("local[2]")).getOrCreate()
            b = {cluster.broker!r}
            q = (write_stream(read_stream(spark, broker=b, journals="connect/in", starting_offsets="earliest")
                              .selectExpr("journal AS src", "begin"),
                              broker=b, journal="connect/out", checkpoint_location={str(tmp_path / "ckpt")!r})
                 .trigger(availableNow=True).start())
            assert q.awaitTermination(600), "the query did not end within 10 minutes"
            rows = (parse_json(read(spark, broker=b, journals="connect/out"), "src STRING, begin LONG")
                    .select("message.*").collect())
            # Typed rows: parsed in the scan, by the server, for ndjson and protobuf alike.
            typed = read(spark, broker=b, journals="connect/out", schema="src STRING, begin LONG").collect()
            in_scan = read(spark, broker=b, journals="connect/proto", protobuf_message="judge.Doc",
                           protobuf_descriptor_file={str(desc)!r}).select("_gazette.begin", "name").collect()
            # Under Connect, engine="auto" decodes in Python; the JVM engine needs py4j and says so.
            docs = parse_protobuf(read(spark, broker=b, journals="connect/proto"), "judge.Doc", {str(desc)!r}).collect()
            # Messages outside transactions carry no UUID in field 1, nor in the row.
            decoded = [[r.begin, r.uuid, str(uuid.UUID(bytes=bytes(r.message.uuid))) if r.message.uuid else None,
                        r.message.name] for r in docs]
            refusals = []
            for attempt in (lambda: admin.list_journals(spark, b),
                            lambda: parse_protobuf(read(spark, broker=b, journals="connect/proto"), "judge.Doc",
                                                   {str(desc)!r}, engine="jvm")):
                try:
                    attempt()
                    refusals.append(None)
                except RuntimeError as e:
                    refusals.append(str(e))
            print("RESULT " + json.dumps({{"session": type(spark).__module__, "rows": [[r.src, r.begin] for r in rows],
                                           "decoded": decoded, "refusals": refusals,
                                           "typed": [[r.src, r.begin] for r in typed],
                                           "in_scan": [[r.begin, r.name] for r in in_scan]}}))
            spark.stop()
        """)
        )
        out = subprocess.run([sys.executable, str(job)], capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert out.returncode == 0, out.stderr[-3000:]
        result = json.loads(next(line for line in out.stdout.splitlines() if line.startswith("RESULT "))[7:])
        assert result["session"].startswith("pyspark.sql.connect")
        # What the sink committed, as Gazette's ReadCommittedIter reads it: each input message once;
        # and the helpers under Connect read back just that.
        committed = [json.loads(r["payload"]) for r in judge.read(cluster.broker, "connect/out")]
        written = Counter((m["src"], m["begin"]) for m in committed)
        assert written == Counter(want), {"missing": Counter(want) - written, "extra": written - Counter(want)}
        rows = Counter(tuple(r) for r in result["rows"])
        assert rows == written, {"missing": written - rows, "extra": rows - written}
        assert Counter(tuple(r) for r in result["typed"]) == written
        assert all(r is not None and "needs a classic SparkSession" in r for r in result["refusals"])
        decoded = result["decoded"]
        assert {begin for begin, _, _, _ in decoded} == want_proto and len(decoded) == len(want_proto)
        assert all(row_uuid == field_uuid and name for _, row_uuid, field_uuid, name in decoded)
        assert any(row_uuid is not None for _, row_uuid, _, _ in decoded)
        assert sorted(result["in_scan"]) == sorted([begin, name] for begin, _, _, name in decoded)
