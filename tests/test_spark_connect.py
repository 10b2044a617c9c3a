"""The options-only helpers through a Spark Connect session: pyspark starts a local Connect
server with the connector jar, and the client never touches the JVM. Run in a subprocess, so
that the Connect server is not the classic session of the other suites."""

import json
import subprocess
import sys
import textwrap

from conftest import ROOT, requires_local_binaries
from cluster import LocalCluster
from specs import journal_specs
import judge

pytestmark = requires_local_binaries


def test_read_and_write_helpers_work_under_spark_connect_and_admin_refuses_clearly(tmp_path):
    with LocalCluster(brokers=1) as cluster:
        cluster.apply(journal_specs("connect/", ["in", "out"]))
        judge.publish(cluster.broker, "connect/in", seed=7)
        want = {(r["journal"], r["begin"]) for r in judge.read(cluster.broker, "connect/in")}
        job = tmp_path / "job.py"
        job.write_text(textwrap.dedent(f"""
            import json
            from pyspark.sql import SparkSession
            from spark_gazette import admin, configure_spark_with_gazette, parse_json, read, read_stream, write_stream
            spark = configure_spark_with_gazette(SparkSession.builder.remote("local[2]")).getOrCreate()
            b = {cluster.broker!r}
            q = (write_stream(read_stream(spark, broker=b, journals="connect/in", starting_offsets="earliest")
                              .selectExpr("journal AS src", "begin"),
                              broker=b, journal="connect/out", checkpoint_location={str(tmp_path / "ckpt")!r})
                 .trigger(availableNow=True).start())
            q.awaitTermination()
            rows = parse_json(read(spark, broker=b, journals="connect/out"), "src STRING, begin LONG").select("message.*").collect()
            try:
                admin.list_journals(spark, b)
                refused = None
            except RuntimeError as e:
                refused = str(e)
            print("RESULT " + json.dumps({{"session": type(spark).__module__, "rows": [[r.src, r.begin] for r in rows],
                                           "refused": refused}}))
            spark.stop()
        """))
        out = subprocess.run([sys.executable, str(job)], capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert out.returncode == 0, out.stderr[-3000:]
        result = json.loads(next(l for l in out.stdout.splitlines() if l.startswith("RESULT "))[7:])
        assert result["session"].startswith("pyspark.sql.connect")
        rows = [tuple(r) for r in result["rows"]]
        assert len(rows) == len(set(rows)) and set(rows) == want
        assert "needs a classic SparkSession" in result["refused"]
