"""One journal's batch, far larger than the heap, read committed in a small executor.

The journal holds a single transaction spanning all of it (acknowledged by its last message),
the worst case for a sequencer: its messages cannot be emitted before the ACK, so they are
replayed from the journal instead of held. The Spark job runs with a 512 MiB heap.
Size with GAZETTE_MEMORY_TEST_MIB (default 1024).
"""

import json
import os
import subprocess
import sys
import textwrap
import urllib.request

from cluster import LocalCluster
from conftest import assembly_jar, requires_local_binaries
from messages import gazette_uuid
from specs import journal_specs

pytestmark = requires_local_binaries

MIB = int(os.environ.get("GAZETTE_MEMORY_TEST_MIB", "1024"))
LINE = 1024
PRODUCER = 0x0123456789AB | 0x010000000000


def test_a_batch_larger_than_the_heap_is_read_committed_in_bounded_memory(tmp_path):
    messages = MIB * 1024 * 1024 // LINE
    base_clock = 0x1EF0000000000000
    with LocalCluster(brokers=1) as cluster:
        cluster.apply(journal_specs("memory/", ["big"], length=256 << 20, codec="NONE"))
        payload_bytes = 0
        batch, size = [], 0
        for i in range(messages + 1):
            flags = 2 if i == messages else 1  # one transaction, acknowledged by the last message
            head = f'{{"_meta":{{"uuid":"{gazette_uuid(PRODUCER, base_clock + (i + 1) * 16, flags)}"}},"i":{i},"pad":"'
            line = head + "x" * max(0, LINE - len(head) - 3) + '"}'
            if flags == 1:
                payload_bytes += len(line)
            batch.append(line + "\n")
            size += len(line) + 1
            if size >= 16 << 20 or i == messages:
                req = urllib.request.Request(f"{cluster.broker}/memory/big", data="".join(batch).encode(), method="PUT")
                urllib.request.urlopen(req, timeout=120).read()
                batch, size = [], 0

        job = tmp_path / "job.py"
        job.write_text(
            textwrap.dedent(f"""
            import json
            from pyspark.sql import SparkSession
            spark = (SparkSession.builder.master("local[1]")
                     .config("spark.driver.memory", "512m")
                     .config("spark.jars", {assembly_jar()!r})
                     .config("spark.ui.enabled", "false").getOrCreate())
            df = (spark.read.format("gazette").option("broker", {cluster.broker!r})
                  .option("journals", "memory/big").load())
            row = df.selectExpr("count(*) AS n", "sum(length(value)) AS bytes").first()
            heap = spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory()
            print(json.dumps({{"n": row.n, "bytes": row.bytes, "heap": heap}}))
            spark.stop()
        """)
        )
        out = subprocess.run([sys.executable, str(job)], capture_output=True, text=True, timeout=1200)
        assert out.returncode == 0, out.stderr[-3000:]
        result = json.loads(out.stdout.strip().splitlines()[-1])
        assert result["n"] == messages
        assert result["bytes"] == payload_bytes
        assert result["heap"] <= 600 * 1024 * 1024
        assert payload_bytes > 1.5 * result["heap"]
