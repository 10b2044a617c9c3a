"""The source over many journals: what a trigger costs the driver, and a batch end to end.

Creates N journals under one selector (default 1,000), then, round after round, appends one small
message to each journal and lets one micro-batch of a running stream (`foreachBatch` counting the
rows) read them all. The first WARM_UP rounds are not measured: a stream runs for hours, and in
its first batches the JVM spends more of the machine compiling than running them (half of the
JVM's CPU in the first ten batches here, by a profile). For the batches that read a whole round
after them it prints the medians of:

  - driver: the source's own work per trigger, `latestOffset` + `planInputPartitions` + `commit`
    (the source's progress metrics `latestOffsetMs`, `planMs`, `commitMs`); Spark's `latestOffset`
    duration where the source does not report them,
  - Spark's `durationMs` of the batch: `latestOffset`, `queryPlanning`, `walCommit`, `addBatch`,
    `commitOffsets`, `triggerExecution` (the batch end to end),
  - the tasks the batch ran, and the checkpoint files written and deleted per batch under the
    source's sequencer directory.

Numbers are printed, never asserted: the machine decides them.

    python tests/bench/bench_journals.py [--journals 10000] [--rounds 8] [--warm-up 12] \\
        [--jar spark-gazette-assembly.jar]
"""

import argparse
import os
import statistics
import subprocess
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

PREFIX = "bench-journals/"


class ManyReplicas:
    """Broker flags for the harness: a broker serves at most 1,024 journals unless told more."""

    tls = False

    def __init__(self, journals: int):
        self.journals = journals

    def broker_flags(self):
        return ["--broker.limit", str(max(1024, self.journals + 16))]

    def gazctl_flags(self):
        return []

    def http_headers(self):
        return {}

    def ssl_context(self):
        return None


def append_round(broker: str, names: list[str], round_: int, pool: ThreadPoolExecutor) -> int:
    """One committed message (OUTSIDE_TXN) to every journal; returns the bytes appended."""

    def one(i_name):
        i, name = i_name
        uuid = gazette_uuid(0x020000000000 + i, 0x1EF0000000000000 + (round_ + 1) * 16, 0)
        line = f'{{"_meta":{{"uuid":"{uuid}"}},"journal":{i},"round":{round_}}}\n'.encode()
        urllib.request.urlopen(urllib.request.Request(f"{broker}/{name}", data=line, method="PUT"), timeout=60).read()
        return len(line)

    return sum(pool.map(one, enumerate(names)))


def wait_writable(broker: str, names: list[str], timeout: float = 900.0) -> None:
    """Waits until every journal takes a zero-byte append (the harness's proof, asked concurrently:
    its own wait lists every journal again while any is unassigned, slow for thousands)."""
    deadline = time.monotonic() + timeout
    stop = threading.Event()

    def one(name):
        while not stop.is_set():
            try:
                urllib.request.urlopen(
                    urllib.request.Request(f"{broker}/{name}", data=b"", method="PUT"), timeout=10
                ).read()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"journal {name} takes no appends") from None
                time.sleep(0.2)

    pool = ThreadPoolExecutor(16)
    try:
        list(pool.map(one, names))
    finally:
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)


def files(root: str) -> set[str]:
    """Every file under `root` (checksum files left out), by path."""
    out = set()
    for d, _, fs in os.walk(root):
        out.update(os.path.join(d, f) for f in fs if not f.endswith(".crc"))
    return out


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description="the source's per-trigger cost over many journals")
    parser.add_argument("--journals", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=8, help="batches measured, after the warm-up ones")
    parser.add_argument("--warm-up", type=int, default=12, help="batches run before those measured (at least 1)")
    parser.add_argument("--jar", help="the connector's assembly jar (default: the one spark_gazette bundles)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--jfr", help="record the driver with Java Flight Recorder into this file")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a source option to add, e.g. bytesPerPartition=1048576",
    )
    args = parser.parse_args()
    if args.warm_up < 1:
        parser.error("--warm-up must be at least 1: the first batch reads the journals' first round")

    from pyspark.sql import SparkSession

    names = [f"{PREFIX}j{i:05d}" for i in range(args.journals)]
    with LocalCluster(brokers=1, security=ManyReplicas(args.journals)) as cluster:
        t = time.monotonic()
        # Etcd takes at most 128 operations a transaction: gazctl splits the apply.
        specs = journal_specs(PREFIX, [n[len(PREFIX) :] for n in names], labels={"app": "bench-journals"})
        subprocess.run(
            [
                cluster.gazctl_bin,
                "journals",
                "apply",
                "--broker.address",
                cluster.broker,
                "--specs",
                "-",
                "--max-txn-size",
                "100",
                "--log.level",
                "warn",
            ],
            input=specs,
            text=True,
            check=True,
        )
        wait_writable(cluster.broker, names)
        print(f"{args.journals} journals created in {time.monotonic() - t:.1f} s", flush=True)

        builder = (
            SparkSession.builder.master(args.master)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.log.level", "ERROR")
            .config("spark.sql.shuffle.partitions", "2")
        )
        if args.jfr:
            builder = builder.config(
                "spark.driver.extraJavaOptions", f"-XX:StartFlightRecording=filename={args.jfr},settings=profile"
            )
        if args.jar:
            builder = builder.config("spark.jars", args.jar)
        else:
            from spark_gazette import configure_spark_with_gazette

            builder = configure_spark_with_gazette(builder)
        spark = builder.getOrCreate()

        ckpt = tempfile.mkdtemp(prefix="bench-journals-ckpt-")
        states = os.path.join(ckpt, "sources", "0", "sequencer")
        rows = {}
        done = threading.Event()
        expected_rows = [0]

        def each(df, batch_id):
            rows[batch_id] = df.count()
            if sum(rows.values()) >= expected_rows[0]:
                done.set()

        options = dict(o.split("=", 1) for o in args.option)
        pool = ThreadPoolExecutor(16)
        # A round of appends takes a while: a batch waits until every journal has its message.
        round_bytes = append_round(cluster.broker, names, 0, pool)
        reader = (
            spark.readStream.format("gazette")
            .option("broker", cluster.broker)
            .option("selector", "app=bench-journals")
            .option("startingOffsets", "earliest")
            .option("minBytesPerTrigger", str(round_bytes))
            .option("maxTriggerDelay", "60s")
            .options(**options)
        )
        expected_rows[0] = args.journals
        query = (
            reader.load()
            .writeStream.option("checkpointLocation", ckpt)
            .trigger(processingTime="200 milliseconds")
            .foreachBatch(each)
            .start()
        )
        try:
            if not done.wait(600):
                raise RuntimeError(f"the first batch did not come: {query.lastProgress}")
            written, deleted, before = [], [], files(states)
            for r in range(1, args.warm_up + args.rounds):
                done.clear()
                expected_rows[0] = args.journals * (r + 1)
                append_round(cluster.broker, names, r, pool)
                if not done.wait(600):
                    raise RuntimeError(f"round {r} was not read: {query.lastProgress}")
                # The batch's commit happens when the next one is planned: wait for the query to idle.
                time.sleep(1.0)
                after = files(states)
                if r >= args.warm_up:
                    written.append(len(after - before))
                    deleted.append(len(before - after))
                before = after
            query.processAllAvailable()
            progress = [p for p in query.recentProgress if p["numInputRows"] > 0][-args.rounds :]
        finally:
            query.stop()
            spark.stop()
            pool.shutdown()

    def d(p, k):
        return p["durationMs"].get(k, 0)

    def m(p, k):
        v = p["sources"][0]["metrics"].get(k)
        return float(v) if v is not None else None

    own = [p for p in progress if m(p, "latestOffsetMs") is not None]
    print(
        f"\n{args.journals} journals, one message each per batch ({round_bytes / args.journals:.0f} bytes), "
        f"{len(progress)} batches measured, master {args.master}"
    )
    if own:
        lo = [m(p, "latestOffsetMs") for p in own]
        pl = [m(p, "planMs") for p in own]
        co = [m(p, "commitMs") for p in own]
        tot = [a + b + c for a, b, c in zip(lo, pl, co, strict=True)]
        print(
            f"  driver latestOffset+plan+commit  median {median(tot):7.0f} ms  "
            f"(latestOffset {median(lo):.0f}, plan {median(pl):.0f}, commit {median(co):.0f})"
        )
        print(f"  tasks per batch                  median {median([m(p, 'tasks') or 0 for p in own]):7.0f}")
        print(
            f"result driver per trigger: {median(tot):.0f} ms "
            f"(latestOffset + plan + commit over {args.journals} journals; goal 200 over 1,000, 2,000 over 10,000)"
        )
    for k in ("latestOffset", "queryPlanning", "walCommit", "addBatch", "commitOffsets", "triggerExecution"):
        print(f"  spark {k:<26} median {median([d(p, k) for p in progress]):7.0f} ms")
    print(
        f"result batch end to end: {median([d(p, 'triggerExecution') for p in progress]):.0f} ms "
        f"(1 message from each of {args.journals} journals; goal 1,000 over 1,000)"
    )
    print(
        f"  checkpoint files written per batch median {median(written):.0f} (max {max(written, default=0)}), "
        f"deleted median {median(deleted):.0f}"
    )


if __name__ == "__main__":
    main()
