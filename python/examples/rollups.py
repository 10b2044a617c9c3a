"""The main job (`make demo`): purchase events in Gazette, rolled up per user and minute by a
PySpark stream, written back to Gazette exactly once.

1. Starts etcd and a Gazette broker on loopback (the project's harness), and creates an
   `events/` topic of 4 ndjson journals and a `rollups/` topic of 2.
2. Publishes purchase events with Gazette's own Go Publisher while the stream runs: small
   transactions from several producers, some rolled back by a recovering producer, some
   committed events re-sent (duplicates).
3. Streams `events/` read-committed through spark_gazette, counts events and sums amounts per
   user and minute, and writes the rollups to `rollups/` exactly once, printing one line per batch.
4. Reads `rollups/` back read-committed and compares it with what Gazette's own
   ReadCommittedIter says was committed: rolled-back and duplicate events must not be counted.

    python python/examples/rollups.py [--events 20000] [--short] [--real-time]

With `--real-time` the pipeline runs in Spark's real-time mode (`trigger(realTime=...)`), and is
stateless: each committed purchase becomes a receipt in `receipts/` (2 journals) the moment it
is read, written exactly once by the sink with its `origin`; the publishers send at a steady
rate, and the demo prints how long each event took from its append to its receipt as Gazette's
ReadCommittedIter reads it (p50, p99). Real-time mode runs aggregations only from Spark 4.3 on,
and the sink is exactly once there for rows that each come from one input message, which a
rollup's rows do not: the rollup itself stays in micro-batches. The summary sums the receipts
per user and checks them against Gazette's reader as the rollups are checked.

Ctrl-C stops the stream, Spark and the cluster cleanly.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "harness"))

import quiet_jvm  # noqa: E402

import judge  # noqa: E402
from cluster import LocalCluster  # noqa: E402
from specs import journal_specs  # noqa: E402

EVENTS = 4
ROLLUPS = 2
RECEIPTS = 2
REAL_TIME_RATE = 50  # events a second per events journal, in real-time mode
REAL_TIME_PARTITIONS = 2  # real-time tasks, each holding a task slot for the whole batch


def publish_events(broker: str, total: int, stats: list, done: threading.Event, rate: float = 0) -> None:
    """Each events journal gets its share from its own judge process, all at once; with `rate`,
    at most that many events a second each."""
    procs = [
        subprocess.Popen(
            [
                str(judge.BINARY),
                "publish",
                "--broker",
                broker,
                "--journal",
                f"events/part-{i:03d}",
                "--events",
                str(total // EVENTS),
                "--random",
                str(i),
                *(["--rate", str(rate)] if rate else []),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(EVENTS)
    ]
    for p in procs:
        out, err = p.communicate()
        if p.returncode != 0:
            print(f"publisher failed: {err.strip()}", file=sys.stderr)
        else:
            stats.append(json.loads(out.strip().splitlines()[-1]))
    done.set()


LOG4J2 = Path(__file__).with_name("log4j2.properties").as_uri()


def create_topics(cluster, **journals: int) -> None:
    """Each topic's journals, labelled `topic=<name>`, 16 MiB fragments."""
    for topic, n in journals.items():
        cluster.apply(
            journal_specs(f"{topic}/", [f"part-{i:03d}" for i in range(n)], labels={"topic": topic}, length=16 << 20)
        )
    print("topics: " + ", ".join(f"{topic}/ ({n} journals)" for topic, n in journals.items()))


def run(events: int) -> bool:
    from pyspark.sql import SparkSession
    from pyspark.sql.functions import col, count, struct, to_json, window
    from pyspark.sql.functions import sum as sum_

    from spark_gazette import configure_spark_with_gazette, read, read_stream, write_stream

    with LocalCluster(brokers=1) as cluster, tempfile.TemporaryDirectory() as checkpoint:
        broker = cluster.broker
        print(f"cluster: etcd + broker at {broker}")
        create_topics(cluster, events=EVENTS, rollups=ROLLUPS)

        spark = configure_spark_with_gazette(
            SparkSession.builder.master("local[2]")
            .appName("gazette-rollups")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG4J2}")
        )
        spark = quiet_jvm.get_or_create(spark)
        query = None
        try:
            # Typed rows: each event parsed into these fields in the scan.
            purchases = read_stream(
                spark,
                broker=broker,
                selector="topic=events",
                starting_offsets="earliest",
                max_bytes_per_trigger=256 * 1024,
                schema="user STRING, amount INT, ts TIMESTAMP, kind STRING",
            )
            rollups = (
                purchases.groupBy(col("user"), window(col("ts"), "1 minute").alias("w"))
                .agg(count("*").alias("events"), sum_("amount").alias("amount"))
                .select(
                    col("user").alias("key"),
                    to_json(
                        struct(col("user"), col("w.start").cast("string").alias("minute"), col("events"), col("amount"))
                    ).alias("value"),
                )
            )
            query = (
                write_stream(rollups, broker=broker, selector="topic=rollups", checkpoint_location=checkpoint)
                .outputMode("update")
                .trigger(processingTime="500 milliseconds")
                .start()
            )

            stats: list = []
            published = threading.Event()
            threading.Thread(target=publish_events, args=(broker, events, stats, published), daemon=True).start()
            print(f"publishing {events} purchase events with Gazette's Go Publisher; streaming:")

            seen = 0
            while query.isActive:
                progress = query.recentProgress
                for p in progress[seen:]:
                    metrics = p["sources"][0].get("metrics", {}) if p["sources"] else {}
                    print(
                        f"  batch {p['batchId']:>3}: {p['numInputRows']:>6} events in, "
                        f"{int(metrics.get('bytesBehindHead', 0)):>9,} bytes behind head",
                        flush=True,
                    )
                seen = len(progress)
                last = progress[-1] if progress else None
                if (
                    published.is_set()
                    and last
                    and last["numInputRows"] == 0
                    and last["sources"]
                    and last["sources"][0].get("metrics", {}).get("bytesBehindHead") == "0"
                ):
                    break
                time.sleep(0.5)
            if query.exception():
                raise query.exception()
            query.stop()
            query = None

            # What Spark wrote, read committed: the latest rollup of each user and minute.
            latest = {}
            for r in (
                read(
                    spark,
                    broker=broker,
                    selector="topic=rollups",
                    schema="user STRING, minute STRING, events LONG, amount LONG",
                )
                .select("_gazette.journal", "_gazette.begin", "user", "minute", "events", "amount")
                .collect()
            ):
                key = (r.user, r.minute)
                if key not in latest or (r.journal, r.begin) > latest[key][0]:
                    latest[key] = ((r.journal, r.begin), r.events, r.amount)
            spark_events, spark_amount = Counter(), Counter()
            for (user, _), (_, n, amount) in latest.items():
                spark_events[user] += n
                spark_amount[user] += amount

            # What was committed, by Gazette's own ReadCommittedIter.
            truth_events, truth_amount = Counter(), Counter()
            for i in range(EVENTS):
                for r in judge.read(broker, f"events/part-{i:03d}"):
                    doc = json.loads(r["payload"])
                    truth_events[doc["user"]] += 1
                    truth_amount[doc["user"]] += doc["amount"]
            return summarize(truth_events, truth_amount, spark_events, spark_amount, stats)
        finally:
            if query is not None:
                query.stop()
            spark.stop()
            print("stopped: stream, Spark, cluster")


def run_real_time(events: int) -> bool:
    """The stateless pipeline in real-time mode: purchases to receipts, each as soon as it is read."""
    from pyspark.sql import SparkSession
    from pyspark.sql.functions import col, date_trunc, struct, to_json

    from spark_gazette import configure_real_time, configure_spark_with_gazette, origin, read_stream, write_stream

    with LocalCluster(brokers=1) as cluster, tempfile.TemporaryDirectory() as checkpoint:
        broker = cluster.broker
        print(f"cluster: etcd + broker at {broker}")
        create_topics(cluster, events=EVENTS, receipts=RECEIPTS)
        # Every real-time task holds a task slot for the whole batch: local[N] counts threads.
        spark = configure_spark_with_gazette(
            SparkSession.builder.master(f"local[{REAL_TIME_PARTITIONS + 1}]")
            .appName("gazette-receipts")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG4J2}")
        )
        spark = quiet_jvm.get_or_create(configure_real_time(spark, per_query=True))
        query = None
        receipts = [f"receipts/part-{i:03d}" for i in range(RECEIPTS)]
        try:
            with judge.Tail(broker, receipts) as tail:
                purchases = read_stream(
                    spark,
                    broker=broker,
                    selector="topic=events",
                    starting_offsets="earliest",
                    real_time_partitions=REAL_TIME_PARTITIONS,
                    schema="user STRING, amount INT, ts TIMESTAMP, kind STRING, seq LONG",
                )
                rows = purchases.select(
                    origin(purchases),
                    col("user").alias("key"),
                    to_json(
                        struct(
                            col("user"),
                            col("amount"),
                            date_trunc("minute", col("ts")).cast("string").alias("minute"),
                            col("_gazette.journal").alias("source"),
                            col("seq"),
                            col("_gazette.publishTime").cast("double").alias("published"),
                        )
                    ).alias("value"),
                )
                query = (
                    write_stream(rows, broker=broker, selector="topic=receipts", checkpoint_location=checkpoint)
                    .outputMode("update")
                    .trigger(realTime="5 seconds")
                    .start()
                )
                # The first batch's tasks are up and reading before the events come: what is
                # measured is the pipeline, not its start.
                tracker, deadline = spark.sparkContext.statusTracker(), time.monotonic() + 120
                while (
                    sum(s.numActiveTasks for s in map(tracker.getStageInfo, tracker.getActiveStageIds()) if s)
                    < REAL_TIME_PARTITIONS
                    and query.isActive
                    and time.monotonic() < deadline
                ):
                    time.sleep(0.1)
                time.sleep(1)
                stats: list = []
                published = threading.Event()
                threading.Thread(
                    target=publish_events, args=(broker, events, stats, published, REAL_TIME_RATE), daemon=True
                ).start()
                print(
                    f"publishing {events} purchase events with Gazette's Go Publisher, {REAL_TIME_RATE} a second "
                    f"per journal; streaming in real-time mode (batches of 5 seconds, {REAL_TIME_PARTITIONS} tasks), "
                    "each purchase a receipt as soon as it is read:"
                )
                seen, truth = 0, None
                while query.isActive:
                    progress = query.recentProgress
                    for p in progress[seen:]:
                        print(
                            f"  batch {p['batchId']:>3}: {p['numInputRows']:>6} events in, "
                            f"{len(tail.snapshot()):>6} receipts read committed so far",
                            flush=True,
                        )
                    seen = len(progress)
                    if published.is_set() and truth is None:
                        truth = [r for i in range(EVENTS) for r in judge.read(broker, f"events/part-{i:03d}")]
                    if truth is not None and len(tail.snapshot()) >= len(truth):
                        break
                    time.sleep(0.5)
                if query.exception():
                    raise query.exception()
                # Stopped mid-batch, as real-time queries are: Spark logs its tasks' interruption
                # as errors; their rows are written, and a restart would run the batch again.
                log4j = spark.sparkContext._jvm.org.apache.logging.log4j
                log4j.core.config.Configurator.setAllLevels("org.apache.spark", log4j.Level.FATAL)
                query.stop()
                query = None
                got = tail.snapshot()

            latencies = sorted(r["seen"] - json.loads(r["payload"])["published"] for r in got)
            written = Counter((d["source"], d["seq"]) for d in (json.loads(r["payload"]) for r in got))
            once = all(n == 1 for n in written.values())
            spark_events, spark_amount = Counter(), Counter()
            for d in (json.loads(r["payload"]) for r in got):
                spark_events[d["user"]] += 1
                spark_amount[d["user"]] += d["amount"]
            truth_events, truth_amount = Counter(), Counter()
            for r in truth:
                doc = json.loads(r["payload"])
                truth_events[doc["user"]] += 1
                truth_amount[doc["user"]] += doc["amount"]
            print(
                f"latency, append -> receipt read committed by Gazette's reader: "
                f"p50 {percentile(latencies, 50) * 1000:.0f} ms, p99 {percentile(latencies, 99) * 1000:.0f} ms, "
                f"max {latencies[-1] * 1000 if latencies else float('nan'):.0f} ms ({len(latencies)} receipts)"
            )
            print(f"receipts written twice: {sum(n - 1 for n in written.values())}")
            return summarize(truth_events, truth_amount, spark_events, spark_amount, stats) and once
        finally:
            if query is not None:
                query.stop()
            spark.stop()
            print("stopped: stream, Spark, cluster")


def percentile(xs: list, p: float) -> float:
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float("nan")


def summarize(truth_events, truth_amount, spark_events, spark_amount, stats) -> bool:
    users = sorted(set(truth_events) | set(spark_events))
    print()
    print(f"{'user':<10}{'committed':>11}{'counted':>10}{'amount':>10}{'summed':>10}")
    for u in users:
        print(f"{u:<10}{truth_events[u]:>11}{spark_events[u]:>10}{truth_amount[u]:>10}{spark_amount[u]:>10}")
    print(
        f"{'total':<10}{sum(truth_events.values()):>11}{sum(spark_events.values()):>10}"
        f"{sum(truth_amount.values()):>10}{sum(spark_amount.values()):>10}"
    )
    rolled_back = sum(s["rolledBack"] for s in stats)
    duplicates = sum(s["duplicates"] for s in stats)
    print(
        f"published: {sum(s['committed'] for s in stats)} committed, {rolled_back} rolled back, "
        f"{duplicates} duplicate re-sends"
    )
    ok = truth_events == spark_events and truth_amount == spark_amount and len(stats) == EVENTS
    print(f"rolled-back and duplicate events counted: {'none' if ok else 'SOME'}")
    print(f"exactly-once: {'OK' if ok else 'MISMATCH'}")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--short", action="store_true", help="a quick run (2,000 events), as CI does")
    parser.add_argument(
        "--real-time", action="store_true", help="real-time mode: a stateless pipeline, purchases to receipts"
    )
    args = parser.parse_args()
    try:
        ok = (run_real_time if args.real_time else run)(2000 if args.short else args.events)
    except KeyboardInterrupt:
        print("\ninterrupted: stream, Spark and cluster stopped")
        sys.exit(130)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
