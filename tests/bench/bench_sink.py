"""Exactly-once write throughput of the sink against Gazette's own Go Publisher, and what its
output costs read-committed readers, on one machine.

Writes ROWS ndjson rows of about 1 KiB from PARTITIONS tasks into JOURNALS journals:

  - go-publisher: PARTITIONS concurrent Gazette Publishers (the judge's publish-bench), each
                  publishing its share uncommitted across the journals, then its ACK intents,
  - spark-batch:  a batch `df.write` of this connector, exactly once, keyed over the journals,

(after a small write that warms Spark up), then reads the first output journal of each with
Gazette's ReadCommittedIter (default ring of 8,192 messages) and ReadUncommittedIter, and prints
rows/s, the sink's ratio against the Go Publisher (>1 is faster), and each output's
read-committed/uncommitted cost ratio.

    python tests/bench/bench_sink.py [--rows 1000000] [--partitions 16] [--journals 4]
"""

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from cluster import LocalCluster  # noqa: E402
from specs import journal_specs  # noqa: E402
import judge  # noqa: E402
from timing import timed  # noqa: E402

SIZE = 1024


def main() -> None:
    parser = argparse.ArgumentParser(description="exactly-once writes, ours against Gazette's Go Publisher")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--journals", type=int, default=4)
    args = parser.parse_args()
    journals = [f"part-{i}" for i in range(args.journals)]

    from pyspark.sql import SparkSession
    from spark_gazette import configure_spark_with_gazette, write

    with LocalCluster(brokers=1) as cluster:
        for prefix in ("bench/go/", "bench/sink/", "bench/warm-up/"):
            cluster.apply(journal_specs(prefix, journals, length=1 << 30, codec="NONE"))

        def go_publisher():
            out = subprocess.run([str(judge.BINARY), "publish-bench", "--broker", cluster.broker,
                                  "--journals", ",".join(f"bench/go/{j}" for j in journals), "--n", str(args.rows),
                                  "--size", str(SIZE), "--producers", str(args.partitions)],
                                 capture_output=True, text=True, check=True)
            return float(out.stdout.split()[0])

        spark = configure_spark_with_gazette(SparkSession.builder.master("local[2]")
                                             .config("spark.ui.enabled", "false")
                                             .config("spark.ui.showConsoleProgress", "false")
                                             .config("spark.log.level", "ERROR")).getOrCreate()
        try:
            pad = SIZE - len('{"_meta":{"uuid":"00000000-0000-0000-0000-000000000000"},"n":0000000,"pad":""}') - 1
            def rows(n: int):
                return spark.range(0, n, 1, args.partitions).selectExpr(
                    f"to_json(named_struct('n', id, 'pad', repeat('x', {pad}))) AS value", "cast(id AS string) AS key")
            write(rows(args.partitions * 100), broker=cluster.broker, selector="prefix=bench/warm-up/")
            go_took = go_publisher()
            spark_took, _ = timed(lambda: write(rows(args.rows), broker=cluster.broker, selector="prefix=bench/sink/"), runs=1)
        finally:
            spark.stop()

        def read_cost(journal: str):
            def go(mode: str):
                out = subprocess.run([str(judge.BINARY), "read", "--broker", cluster.broker, "--journal", journal,
                                      mode, "--count"], capture_output=True, text=True, check=True)
                return int(out.stdout.split()[0])
            committed, n = timed(lambda: go("--committed"))
            uncommitted, _ = timed(lambda: go("--uncommitted"))
            return committed, uncommitted, n

        costs = {name: read_cost(f"bench/{name}/{journals[0]}") for name in ("go", "sink")}

    print(f"{args.rows} rows of {SIZE} bytes from {args.partitions} writers into {len(journals)} journals")
    print(f"  go-publisher  {go_took:7.2f} s  {args.rows / go_took:10.0f} rows/s")
    print(f"  spark-batch   {spark_took:7.2f} s  {args.rows / spark_took:10.0f} rows/s")
    print(f"ratio spark-batch/go-publisher: {go_took / spark_took:.2f} (throughput, >1 is faster)")
    for name, (committed, uncommitted, n) in costs.items():
        print(f"read cost of {name} output ({n} messages in bench/{name}/{journals[0]}): committed {committed:.2f} s, "
              f"uncommitted {uncommitted:.2f} s, ratio {committed / uncommitted:.2f}")


if __name__ == "__main__":
    main()
