"""End-to-end latency of the source: from an append to its row in a `foreachBatch`.

Creates JOURNALS journals under one selector and appends RATE small committed messages a second
(OUTSIDE_TXN, spread over the journals in turn), each carrying the time it was appended, for
SECONDS seconds. A stream with the default trigger reads them read committed; its `foreachBatch`
collects each batch's times and takes the difference to the moment it sees them. Prints p50,
p99 and the largest latency (after WARM_UP seconds), batches run and their median duration.

The reference, in the same run: Spark's own `rate` source at the same rate, into the same kind
of `foreachBatch`: its median micro-batch is what Spark itself costs per batch (planning, offset
and commit logs, the job) on this machine with the default trigger, and a latency's floor is
about one and a half such batches. (Its rows' own latencies are printed too, but the rate source
releases rows a whole second at a time, which adds half a second to them.)

Numbers are printed, never asserted: the machine decides them.

    python tests/bench/bench_latency.py [--journals 100] [--rate 70] [--seconds 60] [--warm-up 10]
"""

import argparse
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from cluster import LocalCluster  # noqa: E402
from messages import gazette_uuid  # noqa: E402
from specs import journal_specs  # noqa: E402

PREFIX = "bench-latency/"


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description="the source's latency, from an append to a foreachBatch")
    parser.add_argument("--journals", type=int, default=100)
    parser.add_argument("--rate", type=float, default=70.0, help="messages a second, over all journals")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warm-up", type=float, default=10.0, help="seconds left out of the percentiles")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    from spark_gazette import configure_spark_with_gazette, read_stream

    names = [f"j{i:04d}" for i in range(args.journals)]
    with LocalCluster(brokers=1) as cluster, tempfile.TemporaryDirectory() as tmp:
        cluster.apply(journal_specs(PREFIX, names, labels={"app": "bench-latency"}))
        spark = configure_spark_with_gazette(
            SparkSession.builder.master(args.master)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.log.level", "ERROR")
        ).getOrCreate()
        latencies, seen = [], [0]
        started = time.time()

        def each(df, _batch_id):
            times = [float(r[0]) for r in df.selectExpr("get_json_object(CAST(value AS STRING), '$.t')").collect()]
            now = time.time()
            seen[0] += len(times)
            latencies.extend(now - t for t in times if t >= started + args.warm_up)

        stream = read_stream(spark, broker=cluster.broker, selector="app=bench-latency", starting_offsets="earliest")
        query = stream.writeStream.option("checkpointLocation", str(Path(tmp, "ckpt"))).foreachBatch(each).start()

        stop = threading.Event()
        sent = [0]

        def append(i: int) -> None:
            journal = PREFIX + names[i % len(names)]
            uuid = gazette_uuid(0x030000000000 + i % len(names), 0x1EF0000000000000 + (i + 1) * 16, 0)
            line = f'{{"_meta":{{"uuid":"{uuid}"}},"t":{time.time():.6f}}}\n'.encode()
            urllib.request.urlopen(
                urllib.request.Request(f"{cluster.broker}/{journal}", data=line, method="PUT"), timeout=30
            ).read()

        def traffic() -> None:
            # Appends at a steady rate, whatever each one takes: a pool sends them.
            with ThreadPoolExecutor(8) as pool:
                begin = time.monotonic()
                while not stop.is_set():
                    due = begin + sent[0] / args.rate
                    if due > time.monotonic():
                        time.sleep(due - time.monotonic())
                    pool.submit(append, sent[0])
                    sent[0] += 1

        sender = threading.Thread(target=traffic, daemon=True)
        try:
            started = time.time()
            sender.start()
            time.sleep(args.seconds)
            stop.set()
            sender.join()
            # A loaded machine may leave the stream minutes behind: what is measured is latency,
            # and it counts only once everything sent was read.
            deadline = time.monotonic() + 300
            while seen[0] < sent[0] and time.monotonic() < deadline:
                time.sleep(0.1)
            progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
            query.stop()
            # After ours, so that the JVM has compiled Spark's paths before either is measured.
            reference = spark_floor(spark, args, Path(tmp, "rate-ckpt"))
        finally:
            query.stop()
            spark.stop()

    durations = [p["durationMs"]["triggerExecution"] for p in progress]
    print(
        f"{args.journals} journals, {args.rate:.0f} messages a second for {args.seconds:.0f} s "
        f"({sent[0]} appended, {seen[0]} read), master {args.master}"
    )
    print(
        f"  batches with rows (last {len(progress)} reported): "
        f"median {statistics.median(durations) if durations else 0:.0f} ms"
    )
    for k in ("latestOffset", "queryPlanning", "walCommit", "addBatch", "commitOffsets"):
        print(f"    {k:<14} median {statistics.median([p['durationMs'].get(k, 0) for p in progress] or [0]):5.0f} ms")
    metrics = [p["sources"][0].get("metrics", {}) for p in progress]
    for k in ("latestOffsetMs", "planMs", "commitMs"):
        values = [float(m[k]) for m in metrics if m.get(k) is not None]
        if values:
            print(f"    source {k:<14} median {statistics.median(values):5.0f} ms")
    ref_lat, ref_durations = reference
    print(
        "  Spark's rate source, same rate and foreachBatch: "
        f"batches median {statistics.median(ref_durations or [0]):.0f} ms, "
        f"latency p50 {percentile(ref_lat, 50) * 1000:.0f} ms, p99 {percentile(ref_lat, 99) * 1000:.0f} ms"
    )
    ours = statistics.median(durations) if durations else float("nan")
    print(
        f"ratio median micro-batch, rate source / source: {statistics.median(ref_durations or [0]) / ours:.2f} "
        "(Spark's own cost of a batch against ours: 1 is as fast as Spark goes)"
    )
    print(f"result latency p50: {percentile(latencies, 50) * 1000:.0f} ms (append to foreachBatch, goal 200)")
    print(f"result latency p99: {percentile(latencies, 99) * 1000:.0f} ms (goal 1000)")
    print(f"result latency max: {max(latencies, default=float('nan')) * 1000:.0f} ms")
    if seen[0] != sent[0]:
        raise SystemExit(f"read {seen[0]} of {sent[0]} messages")


def spark_floor(spark, args, checkpoint) -> tuple[list, list]:
    """Latencies and batch durations of Spark's rate source at the same rate, default trigger."""
    latencies, started = [], time.time()

    def each(df, _batch_id):
        times = [r[0].timestamp() for r in df.select("timestamp").collect()]
        now = time.time()
        latencies.extend(now - t for t in times if t >= started + args.warm_up)

    query = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", max(1, int(args.rate)))
        .load()
        .writeStream.option("checkpointLocation", str(checkpoint))
        .foreachBatch(each)
        .start()
    )
    try:
        time.sleep(args.seconds)
        durations = [p["durationMs"]["triggerExecution"] for p in query.recentProgress if p["numInputRows"] > 0]
    finally:
        query.stop()
    return latencies, durations


if __name__ == "__main__":
    main()
