"""The soak: a pipeline at a steady rate for an hour, its resources sampled as it goes.

Gazette's Go Publisher (`judge publish-rate`) appends RATE bytes a second of 1 KiB ndjson
messages, in transactions every 100 ms, to JOURNALS input journals; a Spark query reads them
committed and writes each message, its UUID taken off, to the matching output journal through
the exactly-once sink (2 s trigger). Spark runs as a standalone cluster (a master, two workers,
two executors of one core: separate JVMs), or in local mode with --local.

Every --every seconds (after a warm-up) one row: the rates since the last row, and the driver's
and each executor's live heap (after a full GC, `jcmd GC.run`), threads and open descriptors
(/proc), and the checkpoint's size and files (the current epoch's staged runs apart: they come
and go with each epoch). At the end the Publisher stops, the query
finishes what is there, and Gazette's ReadCommittedIter (`judge exactly-once`) counts every
message in and out. The verdict judges the second half of the run: the middle row against the
last, and no measure rising at every row of it. A pool that fills up to its cap in the first
half (Spark's block-manager-storage-async-thread-pool reaches 100 threads in about half an hour)
is not a leak; what still grows in the second half is. The exit status is 0
when nothing was lost or duplicated and every measure stayed flat.

    python tests/soak/soak.py [--minutes 60] [--rate 5242880] [--every 300] [--local]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[1] / "harness"
sys.path.insert(0, str(HARNESS))

from cluster import LocalCluster  # noqa: E402
from judge import BINARY as JUDGE  # noqa: E402
from spark_standalone import SparkStandalone  # noqa: E402
from specs import journal_specs  # noqa: E402

MIB = 1 << 20
# Middle row against last: how much each measure may grow and still count as flat.
FLAT = {"heap": (1.5, 64 * MIB), "threads": (1.0, 8), "fds": (1.0, 16), "ckpt": (1.5, MIB)}


def env_default(name: str, default: float) -> float:
    return float(os.environ.get(name) or default)


def jvm_sample(pid: int) -> dict:
    """Live heap after a full GC, threads and open descriptors of one JVM."""
    subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, timeout=120)
    info = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True, timeout=60).stdout
    used = re.search(r"used (\d+)K", info)
    dump = subprocess.run(["jcmd", str(pid), "Thread.print"], capture_output=True, text=True, timeout=60).stdout
    # Threads by name, numbers taken out, so that a pool that grows shows as one name.
    names = Counter(re.sub(r"\d+", "N", m) for m in re.findall(r'^"([^"]*)"', dump, re.M))
    status = Path(f"/proc/{pid}/status").read_text()
    return {
        "heap": int(used.group(1)) * 1024 if used else -1,
        "threads": int(re.search(r"^Threads:\s+(\d+)", status, re.M).group(1)),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "names": names,
    }


def executor_pids(app_id: str) -> list[int]:
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                cmd = Path(f"/proc/{d}/cmdline").read_bytes()
            except OSError:
                continue
            if b"CoarseGrainedExecutorBackend" in cmd and app_id.encode() in cmd:
                pids.append(int(d))
    return sorted(pids)


def dir_size(root: str, skip: str = "") -> tuple[int, int]:
    size = files = 0
    for base, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if os.path.join(base, d) != skip]
        for n in names:
            try:
                size += os.path.getsize(os.path.join(base, n))
                files += 1
            except OSError:
                pass
    return size, files


class Publisher:
    """`judge publish-rate` in the background; `last` is its latest (seconds, messages, bytes)."""

    def __init__(self, broker: str, journals: list[str], rate: float):
        self.proc = subprocess.Popen(
            [
                str(JUDGE),
                "publish-rate",
                "--broker",
                broker,
                "--journals",
                ",".join(journals),
                "--rate",
                str(rate),
                "--size",
                "1024",
                "--every",
                "1",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.last = (0.0, 0, 0)
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    def _follow(self) -> None:
        for line in self.proc.stdout:
            s, m, b = line.split()
            self.last = (float(s), int(m), int(b))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(timeout=60)
        self.thread.join(timeout=10)
        if self.proc.returncode not in (0, -15):
            raise RuntimeError(f"publish-rate failed: {self.proc.stderr.read()[-2000:]}")


class Progress:
    """Rows and batches the query has committed, from its progress events (polled, by batch id)."""

    def __init__(self, query):
        self.query, self.rows, self.batches, self.seen = query, 0, 0, set()

    def poll(self) -> None:
        for p in self.query.recentProgress:
            if p["batchId"] not in self.seen and p["numInputRows"] > 0:
                self.seen.add(p["batchId"])
                self.rows += p["numInputRows"]
                self.batches += 1
        if len(self.seen) > 10000:
            self.seen = set(sorted(self.seen)[-1000:])


def start_spark(args, tmp: str):
    from pyspark.sql import SparkSession

    from jars import assembly_jar

    try:
        jar = assembly_jar()
    except FileNotFoundError as e:
        raise SystemExit(str(e)) from None
    builder = (
        SparkSession.builder.appName("soak")
        .config("spark.jars", jar)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # Spark's own logs of the last 20 batches, not 100: the checkpoint reaches its
        # steady size within the warm-up, so that what grows after it is the connector's.
        .config("spark.sql.streaming.minBatchesToRetain", "20")
        .config("spark.log.level", "ERROR")
    )
    standalone = None
    if args.local:
        builder = builder.master("local[2]")
    else:
        standalone = SparkStandalone(workers=2, cores=1, memory="1g").start()
        builder = (
            builder.master(standalone.master)
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.pyspark.python", sys.executable)
            .config("spark.executor.memory", "768m")
            .config("spark.cores.max", "2")
        )
    return builder.getOrCreate(), standalone


def row(cells) -> str:
    return "  ".join(f"{c:>{w}}" for c, w in cells)


HEADER = [
    ("min", 5),
    ("in MiB/s", 8),
    ("out rows/s", 10),
    ("batches", 7),
    ("driver heap", 11),
    ("thr", 4),
    ("fds", 4),
    ("executors heap", 14),
    ("thr", 7),
    ("fds", 7),
    ("ckpt KiB", 8),
    ("files", 5),
    ("staged KiB", 10),
]


def main() -> int:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only, and no warning about it
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=env_default("SOAK_MINUTES", 60))
    p.add_argument("--rate", type=float, default=env_default("SOAK_RATE", 5 * MIB), help="bytes a second")
    p.add_argument("--every", type=float, default=0, help="seconds between rows (300; the whole run when shorter)")
    p.add_argument("--warm-up", type=float, default=60, help="seconds of batches before the first row")
    p.add_argument("--journals", type=int, default=4)
    p.add_argument("--local", action="store_true", help="Spark in local mode instead of a standalone cluster")
    args = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stops what it started, as Ctrl-C does
    seconds = args.minutes * 60
    every = args.every or min(300.0, seconds)

    from pyspark.sql.functions import expr

    ins = [f"soak/in/part-{i}" for i in range(args.journals)]
    outs = [j.replace("soak/in/", "soak/out/") for j in ins]
    print(
        f"soak: {args.minutes:g} min at {args.rate / MIB:.2f} MiB/s into {args.journals} journals, "
        f"Spark {'local[2]' if args.local else 'standalone (master, 2 workers, 2 executors)'}",
        flush=True,
    )
    with LocalCluster(brokers=1) as cluster, tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        cluster.apply(journal_specs("soak/", [j[len("soak/") :] for j in ins + outs], length=64 * MIB))
        spark, standalone = start_spark(args, tmp)
        publisher = query = None
        try:
            spark.sparkContext.setLogLevel("ERROR")
            ckpt = os.path.join(tmp, "ckpt")
            source = (
                spark.readStream.format("gazette")
                .option("broker", cluster.broker)
                .option("journals", ",".join(ins))
                .option("startingOffsets", "earliest")
                .load()
            )
            # The UUID goes: the sink sets its own. `{"_meta":{"uuid":"<36>"},` is 57 bytes.
            out = source.select(
                expr("concat(X'7B', substring(value, 58))").alias("value"),
                expr("replace(journal, 'soak/in/', 'soak/out/')").alias("journal"),
            )
            query = (
                out.writeStream.format("gazette")
                .option("broker", cluster.broker)
                .option("selector", "prefix=soak/out/")
                .option("checkpointLocation", ckpt)
                .trigger(processingTime="2 seconds")
                .start()
            )
            publisher = Publisher(cluster.broker, ins, args.rate)
            progress = Progress(query)
            driver = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
            app = spark.sparkContext.applicationId

            def wait(until: float) -> None:
                while time.monotonic() < until:
                    if query.exception() is not None or publisher.proc.poll() is not None:
                        raise RuntimeError(f"the pipeline stopped: {query.exception() or publisher.proc.stderr.read()}")
                    progress.poll()
                    time.sleep(min(5.0, max(0.0, until - time.monotonic())))

            # The warm-up ends once the query has run batches for the whole of it (its executors
            # started, its pools filled), not when Spark is still starting.
            while progress.batches < 5:
                wait(time.monotonic() + 1)
            start = time.monotonic()
            wait(start + args.warm_up)
            print(row(HEADER), flush=True)
            samples, prev = [], None
            for k in range(int(seconds // every) + 1):
                if k:
                    wait(start + args.warm_up + k * every)
                progress.poll()
                now, (_, _, sent) = time.monotonic(), publisher.last
                execs = [] if args.local else executor_pids(app)
                s = {
                    "t": now,
                    "sent": sent,
                    "rows": progress.rows,
                    "batches": progress.batches,
                    "driver": jvm_sample(driver),
                    "executors": [jvm_sample(e) for e in execs],
                    "executor_pids": execs,
                }
                staging = os.path.join(ckpt, "gazette-sink", "staging")
                s["ckpt"], s["files"] = dir_size(ckpt, skip=staging)
                staged = dir_size(staging)[0]
                dt = now - prev["t"] if prev else 0
                print(
                    row(
                        [
                            (f"{k * every / 60:g}", 5),
                            (f"{per_second(s, prev, 'sent') / MIB:.2f}" if dt else "-", 8),
                            (f"{per_second(s, prev, 'rows'):.0f}" if dt else "-", 10),
                            (s["batches"] - (prev["batches"] if prev else 0), 7),
                            (s["driver"]["heap"] // MIB, 11),
                            (s["driver"]["threads"], 4),
                            (s["driver"]["fds"], 4),
                            (per_executor(s, "heap", MIB), 14),
                            (per_executor(s, "threads"), 7),
                            (per_executor(s, "fds"), 7),
                            (s["ckpt"] // 1024, 8),
                            (s["files"], 5),
                            (staged // 1024, 10),
                        ]
                    ),
                    flush=True,
                )
                samples.append(s)
                prev = s
            print("(heap in MiB: live, after a full GC; executors in the order of their process ids)")

            publisher.stop()
            sent_seconds, messages, sent = publisher.last
            query.processAllAvailable()
            query.stop()
            verdict = judge_run(cluster.broker, ins, outs, samples, messages, sent, sent_seconds)
        finally:
            if publisher:
                publisher.stop()
            if query and query.isActive:
                query.stop()
            spark.stop()
            if standalone:
                standalone.stop()
    return 0 if verdict else 1


def flat(key: str, first: int, last: int) -> bool:
    factor, slack = FLAT[key]
    return last <= first * factor + slack


def per_second(sample: dict, before: dict | None, key: str) -> float:
    """How fast `key` grew from the sample `before` to `sample`."""
    dt = sample["t"] - before["t"] if before else 0
    return (sample[key] - before[key]) / dt if dt else 0.0


def per_executor(sample: dict, key: str, unit: int = 1) -> str:
    """`key` of each executor, in `unit`s: "a/b/c"."""
    return "/".join(str(e[key] // unit) for e in sample["executors"]) or "-"


def climbs(values: list) -> bool:
    """A measure that rose at every row of the second half (four rows or more): a slow leak
    stays within the tolerance of two rows, not under a steady climb."""
    return len(values) >= 4 and all(b > a for a, b in zip(values, values[1:], strict=False))


def judge_run(broker, ins, outs, samples, messages, sent, sent_seconds) -> bool:
    result = json.loads(
        subprocess.run(
            [str(JUDGE), "exactly-once", "--broker", broker, "--journals", ",".join(ins), "--out", ",".join(outs)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    print(
        f"published {messages} messages ({sent / MIB:.0f} MiB) in {sent_seconds:.0f} s: "
        f"{sent / MIB / max(sent_seconds, 1e-9):.2f} MiB/s"
    )
    print(
        f"exactly once (Gazette's ReadCommittedIter): in {result['in']}, out {result['out']}, lost {result['lost']}, "
        f"duplicated {result['duplicated']}, unexpected {result['unexpected']}"
    )
    ok = (
        result["in"] == messages
        and result["out"] == result["in"]
        and not (result["lost"] or result["duplicated"] or result["unexpected"])
    )
    if len(samples) < 2:
        print("verdict: FAIL (fewer than two rows: nothing to compare; run longer or sample more often)", flush=True)
        return False
    middle = (len(samples) - 1) // 2
    first, last, half = samples[middle], samples[-1], samples[middle:]
    print(f"second half of the run, row {middle} against the last:")
    checks = [("driver", k, [s["driver"][k] for s in half]) for k in ("heap", "threads", "fds")]
    if all(s["executor_pids"] == first["executor_pids"] for s in half):
        checks += [
            (f"executor {i}", k, [s["executors"][i][k] for s in half])
            for i in range(len(first["executors"]))
            for k in ("heap", "threads", "fds")
        ]
    else:  # a new JVM in a lost one's place would hide what the old one grew
        print(
            f"executors: {first['executor_pids']} at row {middle}, {last['executor_pids']} at last (one was replaced)"
        )
        ok = False
    checks.append(("checkpoint", "ckpt", [s["ckpt"] for s in half]))
    for who, key, values in checks:
        a, b = values[0], values[-1]
        good = flat(key, a, b) and not climbs(values)
        ok &= good
        unit = MIB if key == "heap" else 1024 if key == "ckpt" else 1
        print(
            f"  {who} {key.replace('ckpt', 'size')}: {a // unit} -> {b // unit}"
            f"{' MiB' if key == 'heap' else ' KiB' if key == 'ckpt' else ''}: {'flat' if good else 'GREW'}"
        )
    for who, a, b in [("driver", first["driver"], last["driver"])] + [
        (f"executor {i}", a, b) for i, (a, b) in enumerate(zip(first["executors"], last["executors"], strict=False))
    ]:
        changed = {n: (a["names"][n], b["names"][n]) for n in a["names"] | b["names"] if a["names"][n] != b["names"][n]}
        if changed:
            print(
                f"  {who} threads by name, middle -> last: "
                + ", ".join(f"{n} {x} -> {y}" for n, (x, y) in sorted(changed.items()))
            )
    print(f"verdict: {'PASS' if ok else 'FAIL'}", flush=True)
    return ok


if __name__ == "__main__":
    sys.exit(main())
