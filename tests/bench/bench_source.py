"""Read-committed throughput of the source against Gazette's own Go reader, on one machine.

Writes SIZE MiB of ndjson purchase-like messages to one journal (transactions of 10 messages
from 4 interleaved producers, each committed by an ACK), then reads the whole journal:

  - go-uncommitted: Gazette's ReadUncommittedIter (framing only), the judge counting messages,
  - go-committed:   Gazette's ReadCommittedIter (framing + sequencing),
  - spark:          a batch read of this connector, read committed, `count(*)` in Spark (local[1]),

each twice, keeping the faster run, and prints MB/s and the ratios against the Go readers.

    python tests/bench/bench_source.py [--mib 256]
"""

import argparse
import subprocess
import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from cluster import LocalCluster  # noqa: E402
from messages import gazette_uuid  # noqa: E402
from specs import journal_specs  # noqa: E402
import judge  # noqa: E402
from timing import timed  # noqa: E402

LINE = 1024


def write(broker: str, journal: str, mib: int) -> int:
    """Appends mib MiB of messages; returns how many are committed (acknowledged data messages)."""
    n = mib * 1024 * 1024 // LINE
    clocks = [0x1EF0000000000000] * 4
    batch, size, data = [], 0, 0
    open_txn = [0] * 4
    for i in range(n):
        p = i % 4
        clocks[p] += 16
        flags = 2 if (i // 4) % 11 == 10 else 1  # every 11th message of a producer is its ACK
        head = f'{{"_meta":{{"uuid":"{gazette_uuid(0x010000000000 + p, clocks[p], flags)}"}},"user":"user-{i % 97}","pad":"'
        line = head + "x" * max(0, LINE - len(head) - 3) + '"}\n'
        if flags == 1:
            open_txn[p] += 1
        else:
            data, open_txn[p] = data + open_txn[p], 0
        batch.append(line)
        size += len(line)
        if size >= 16 << 20 or i == n - 1:
            urllib.request.urlopen(urllib.request.Request(f"{broker}/{journal}", data="".join(batch).encode(),
                                                          method="PUT"), timeout=120).read()
            batch, size = [], 0
    return data



def main() -> None:
    parser = argparse.ArgumentParser(description="read-committed throughput, ours against Gazette's Go reader")
    parser.add_argument("--mib", type=int, default=256)
    args = parser.parse_args()

    from pyspark.sql import SparkSession
    from spark_gazette import configure_spark_with_gazette, read

    with LocalCluster(brokers=1) as cluster:
        cluster.apply(journal_specs("bench/", ["events"], length=1 << 30, codec="NONE"))
        expected = write(cluster.broker, "bench/events", args.mib)
        size = args.mib * 1024 * 1024

        def go(mode: str):
            out = subprocess.run([str(judge.BINARY), "read", "--broker", cluster.broker, "--journal", "bench/events",
                                  mode, "--count"], capture_output=True, text=True, check=True)
            return int(out.stdout.split()[0])

        spark = configure_spark_with_gazette(SparkSession.builder.master("local[1]")
                                             .config("spark.ui.enabled", "false")
                                             .config("spark.ui.showConsoleProgress", "false")
                                             .config("spark.log.level", "ERROR")).getOrCreate()
        try:
            results = {
                "go-uncommitted": timed(lambda: go("--uncommitted")),
                "go-committed": timed(lambda: go("--committed")),
                "spark": timed(lambda: read(spark, broker=cluster.broker, journals="bench/events").count()),
            }
        finally:
            spark.stop()

    print(f"journal: {args.mib} MiB, {expected} committed messages of {LINE} bytes")
    for name, (took, n) in results.items():
        print(f"  {name:<15} {n:>9} messages  {took:7.2f} s  {size / took / 1e6:8.1f} MB/s")
    assert results["spark"][1] == results["go-committed"][1] == expected, "the readers disagree"
    ours = results["spark"][0]
    print(f"ratio spark/go-committed:   {results['go-committed'][0] / ours:.2f} (throughput, >1 is faster)")
    print(f"ratio spark/go-uncommitted: {results['go-uncommitted'][0] / ours:.2f}")


if __name__ == "__main__":
    main()
