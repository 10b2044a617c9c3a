"""One journal's batch, far larger than the heap, read committed in a small executor.

The journal holds a single transaction spanning all of it (acknowledged by its last message),
the worst case for a sequencer: its messages cannot be emitted before the ACK, so they are
replayed from the journal instead of held. The Spark job runs with a 512 MiB heap. Its rows are
judged against Gazette's ReadCommittedIter over the same journal, as a multiset digest per 16 MiB
of offsets (the rows do not fit in memory, the job's nor the test's).
Size with GAZETTE_MEMORY_TEST_MIB (default 1024).
"""

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import urllib.request

import judge
from cluster import LocalCluster
from conftest import assembly_jar, requires_local_binaries
from messages import gazette_uuid
from specs import journal_specs

pytestmark = requires_local_binaries

MIB = int(os.environ.get("GAZETTE_MEMORY_TEST_MIB", "1024"))
LINE = 1024
PRODUCER = 0x0123456789AB | 0x010000000000
BUCKET = 16 << 20  # offsets a digest covers
# A message's digest: 40 bits of SHA-256 over its offsets, UUID and value (a sum of a million
# stays within a long). Summed per bucket, a multiset digest: a message missing, changed or read
# twice changes its bucket's sum.
ROW_DIGEST = (
    "CAST(conv(substr(sha2(concat(encode(concat_ws('|', CAST(begin AS STRING), CAST(end AS STRING), "
    "coalesce(uuid, ''), ''), 'UTF-8'), value), 256), 1, 10), 16, 10) AS BIGINT)"
)


def digest(begin: int, end: int, uuid: str, payload: bytes) -> int:
    """ROW_DIGEST of one message as Gazette's reader reads it."""
    return int(hashlib.sha256(f"{begin}|{end}|{uuid}|".encode() + payload).hexdigest()[:10], 16)


def judged(broker: str, journal: str) -> dict[int, list[int]]:
    """Per bucket of offsets, the number of messages Gazette's ReadCommittedIter reads and the sum
    of their digests."""
    buckets: dict[int, list[int]] = {}
    for r in judge.each(broker, journal):
        b = buckets.setdefault(r["begin"] // BUCKET, [0, 0])
        b[0] += 1
        b[1] += digest(r["begin"], r["end"], r["uuid"], r["payload"].encode())
    return buckets


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
            from pyspark.sql import SparkSession, functions as F
            spark = (SparkSession.builder.master("local[1]")
                     .config("spark.driver.memory", "512m")
                     .config("spark.sql.shuffle.partitions", "1")
                     .config("spark.jars", {assembly_jar()!r})
                     .config("spark.ui.enabled", "false").getOrCreate())
            df = (spark.read.format("gazette").option("broker", {cluster.broker!r})
                  .option("journals", "memory/big").load())
            buckets = (df.selectExpr("begin DIV {BUCKET} AS bucket", "length(value) AS size", {ROW_DIGEST!r} + " AS h")
                       .groupBy("bucket")
                       .agg(F.count("*").alias("n"), F.sum("size").alias("bytes"), F.sum("h").alias("h"))
                       .collect())
            heap = spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory()
            print(json.dumps({{"n": sum(b.n for b in buckets), "bytes": sum(b.bytes for b in buckets),
                              "digests": {{b.bucket: [b.n, b.h] for b in buckets}}, "heap": heap}}))
            spark.stop()
        """)
        )
        out = subprocess.run([sys.executable, str(job)], capture_output=True, text=True, timeout=1200)
        assert out.returncode == 0, out.stderr[-3000:]
        result = json.loads(out.stdout.strip().splitlines()[-1])
        want = judged(cluster.broker, "memory/big")
        assert sum(n for n, _ in want.values()) == messages, "Gazette's reader should read every message committed"
        got = {int(b): v for b, v in result["digests"].items()}
        differ = sorted(b for b in want.keys() | got.keys() if want.get(b) != got.get(b))
        # Each: the bucket's first offset, then (messages, digest sum) by Gazette's reader and by the source.
        assert not differ, [(b * BUCKET, want.get(b), got.get(b)) for b in differ[:5]]
        assert result["n"] == messages
        assert result["bytes"] == payload_bytes
        assert result["heap"] <= 600 * 1024 * 1024
        assert payload_bytes > 1.5 * result["heap"]
