"""Read throughput of one source task against Gazette's Go readers and Spark's text source, on one
machine, all measured in the same run.

Writes SIZE MiB of purchase-like messages of --size bytes (ndjson, or with --framing csv or
protobuf-fixed) to one journal (transactions of 10 messages from 4 interleaved producers, each
committed by an ACK), and the same bytes to a local file, then reads them with

  - go-raw:          Gazette's RetryReader copying the journal to nowhere (the broker path's ceiling),
  - go-uncommitted:  Gazette's ReadUncommittedIter (framing and decoding every message),
  - go-committed:    Gazette's ReadCommittedIter (framing, decoding and sequencing),
  - source-committed / source-uncommitted: a batch read of this connector, `sum(length(value))`,
  - text:            Spark's text source over the local file, `sum(length(value))`,
  - source+from_json / text+from_json: the same, parsing one field of every message with `from_json`,
  - source+schema:   the source given that field as its schema (`.schema`), parsing in the scan,
                     `sum(length(user))`: against text+from_json (ndjson) and csv,
  - csv (with --framing csv): Spark's CSV source over the local file, the same field selected,
  - source-split (with --only): read uncommitted in --cores (or --pieces) pieces (`minPartitions`), run on
    `local[--cores]`, against source-uncommitted's one task,
  - committed-1task / committed-split (with --only): a batch read committed, `count` and
    `sum(length(value))`, on `local[--cores]`, by one task, and split into --cores (--pieces) pieces (each
    sequenced from the states a first pass over the pieces before it finds); with --store both
    read the fragments from the store,
  - store-committed / store+from_json / store+schema (with --store): the source reading the journal's persisted
    fragments straight from the fragment store (`fragmentRoot`), as a Gazette reader with the
    store mounted does; the journal is then written in fragments of 16 MiB, all but the last
    persisted before reading,

Spark in local[1] (one task at a time; the file is read as one split). Each Spark reader runs
untimed, --warmup times and then until the JVM's compilers take under a tenth of a run (they go on
compiling what a query runs for a dozen runs, on the core the broker needs), then the readers take
turns, --runs rounds of one run each (the fastest counts, and a slow spell of a loaded machine
falls on all of them), and the ratios are printed; nothing is asserted about speed.

    python tests/bench/bench_source.py [--mib 256] [--size 1024] [--framing ndjson|csv|protobuf] [--runs 2]
                                       [--only go-raw,text,...]
                                       [--jfr DIR]   (a Flight Recorder profile of each Spark row)
"""

import argparse
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from uuid import UUID

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

import judge  # noqa: E402
from cluster import LocalCluster  # noqa: E402
from messages import gazette_uuid  # noqa: E402
from specs import NDJSON, journal_specs  # noqa: E402
from timing import cpu_by_thread, profiled, thread_cpu, timed  # noqa: E402

SIZES = (100, 1024, 65536)
ROWS = (
    "go-raw",
    "go-uncommitted",
    "go-committed",
    "source-committed",
    "source-uncommitted",
    "text",
    "source+from_json",
    "text+from_json",
    "source+schema",
    "csv",
    "store-committed",
    "store+from_json",
    "store+schema",
    "source-split",
    "committed-1task",
    "committed-split",
)
# Rows measured unless --only names others: the store-* rows need --store.
DEFAULT_ROWS = ROWS[:10]


FRAMINGS = {"ndjson": NDJSON, "csv": "text/csv", "protobuf": "application/x-protobuf-fixed"}


def message(framing: str, uuid: str, user: str, size: int) -> bytes:
    """One message of about `size` bytes, the UUID where the connector looks by default."""
    if framing == "ndjson":
        head = f'{{"_meta":{{"uuid":"{uuid}"}},"user":"{user}","pad":"'
        return (head + "x" * max(0, size - len(head) - 3) + '"}\n').encode()
    if framing == "csv":
        head = f"{uuid},{user},"
        return (head + "x" * max(0, size - len(head) - 1) + "\n").encode()

    def field(number: int, value: bytes) -> bytes:  # a protobuf bytes field
        return bytes([number << 3 | 2]) + _varint(len(value)) + value

    head = field(1, UUID(uuid).bytes) + field(2, user.encode())
    payload = head + field(3, b"x" * max(0, size - len(head) - 8 - 4))
    return b"\x66\x33\x93\x36" + struct.pack("<I", len(payload)) + payload


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def write(
    broker: str, journal: str, mib: int, line_size: int, copy_to, framing: str = "ndjson"
) -> tuple[int, int, int]:
    """Appends about mib MiB of messages of line_size bytes to the journal, and the same bytes to
    copy_to; returns (bytes, messages, committed data messages)."""
    n = max(1, mib * 1024 * 1024 // line_size)
    clocks = [0x1EF0000000000000] * 4
    batch, size, data, total = [], 0, 0, 0
    open_txn = [0] * 4
    for i in range(n):
        p = i % 4
        clocks[p] += 16
        flags = 2 if (i // 4) % 11 == 10 else 1  # every 11th message of a producer is its ACK
        line = message(framing, gazette_uuid(0x010000000000 + p, clocks[p], flags), f"user-{i % 97}", line_size)
        if flags == 1:
            open_txn[p] += 1
        else:
            data, open_txn[p] = data + open_txn[p], 0
        batch.append(line)
        size += len(line)
        if size >= 16 << 20 or i == n - 1:
            body = b"".join(batch)
            urllib.request.urlopen(
                urllib.request.Request(f"{broker}/{journal}", data=body, method="PUT"), timeout=120
            ).read()
            copy_to.write(body)
            total += len(body)
            batch, size = [], 0
    return total, n, data


# The JVM's JIT compiler threads, by the start of their names.
COMPILERS = ("C1 CompilerThre", "C2 CompilerThre")
# The threads that read: Spark's tasks, and the connector's gRPC threads, which receive and parse
# the broker's responses for them (Spark's file sources read on the task's thread itself).
READ_THREADS = ("Executor task", "grpc-")


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a running process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu_seconds() -> float:
    """CPU time of this process's finished children (the Go judge's reads)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def served_from_store(cluster, journal: str, through: int, timeout: float = 120) -> None:
    """Waits until the broker serves the journal's fragments up to at least `through` from the
    store: persisted, and listed again (a broker drops its spool's copy of a fragment only when
    a refresh of the store's listing finds it; until then it serves reads of it itself)."""
    deadline = time.monotonic() + timeout
    while True:
        stored = [f for f in cluster.fragments(journal) if f.get("backing_store") and f.get("mod_time")]
        if max((int(f["end"]) for f in stored), default=0) >= through:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{journal} was not served from the store through {through} in {timeout} s")
        time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description="one source task against Gazette's Go readers and Spark's text source")
    parser.add_argument("--mib", type=int, default=256, help="journal size")
    parser.add_argument("--size", type=int, default=1024, help=f"bytes per message (e.g. {', '.join(map(str, SIZES))})")
    parser.add_argument("--runs", type=int, default=2, help="runs of each reader; the fastest counts")
    parser.add_argument("--warmup", type=int, default=4, help="untimed runs of each Spark reader, at least")
    parser.add_argument("--only", default=None, help=f"comma-separated rows to measure, of {', '.join(ROWS)}")
    parser.add_argument("--store", action="store_true", help="also read persisted fragments from the store")
    parser.add_argument("--jfr", default=None, help="directory for a Flight Recorder profile of each Spark row")
    parser.add_argument(
        "--framing",
        choices=sorted(FRAMINGS),
        default="ndjson",
        help="the messages' framing; text and from_json rows are for ndjson (and text for csv) only, "
        "source+schema for ndjson and csv, csv for csv",
    )
    parser.add_argument(
        "--cores",
        type=int,
        default=1,
        help="Spark's local cores; source-split reads the journal uncommitted in this many pieces (minPartitions)",
    )
    parser.add_argument(
        "--pieces",
        type=int,
        default=None,
        help="pieces of source-split and committed-split (minPartitions; default: --cores)",
    )
    args = parser.parse_args()
    pieces = str(args.pieces or args.cores)
    rows = (
        [r.strip() for r in args.only.split(",") if r.strip()]
        if args.only
        else list(DEFAULT_ROWS) + (["store-committed", "store+from_json", "store+schema"] if args.store else [])
    )
    unknown = set(rows) - set(ROWS)
    if unknown:
        parser.error(f"unknown rows {sorted(unknown)}; known: {', '.join(ROWS)}")
    if args.framing != "ndjson":  # from_json needs JSON; a protobuf journal is no text file
        rows = [
            r
            for r in rows
            if "from_json" not in r
            and r not in ("source-split", "committed-split")
            and not (r in ("text", "source+schema") and args.framing == "protobuf")
        ]
    if args.framing != "csv":
        rows = [r for r in rows if r != "csv"]

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from spark_gazette import configure_spark_with_gazette, read

    with LocalCluster(brokers=1) as cluster, tempfile.TemporaryDirectory() as tmp:
        store = args.store or any(r.startswith("store") for r in rows)
        cluster.apply(
            journal_specs(
                "bench/",
                ["events"],
                content_type=FRAMINGS[args.framing],
                length=(16 << 20) if store else 1 << 30,
                codec="NONE",
                # The store's listing refreshed at once, so that reads find persisted fragments there.
                refresh="1s" if store else "1m0s",
            )
        )
        local = os.path.join(tmp, f"events.{args.framing}")
        with open(local, "wb") as f:
            size, messages, expected = write(cluster.broker, "bench/events", args.mib, args.size, f, args.framing)
        if store:
            served_from_store(cluster, "bench/events", size - (16 << 20))

        def go(*mode: str) -> list[int]:
            out = subprocess.run(
                [str(judge.BINARY), "read", "--broker", cluster.broker, "--journal", "bench/events", *mode],
                capture_output=True,
                text=True,
                check=True,
            )
            return [int(x) for x in out.stdout.split()]

        spark = configure_spark_with_gazette(
            SparkSession.builder.master(f"local[{args.cores}]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.files.maxPartitionBytes", str(4 << 30))
            .config("spark.log.level", "ERROR")
        ).getOrCreate()
        jvm = spark.sparkContext._jvm

        def source(committed: bool):
            return read(spark, broker=cluster.broker, journals="bench/events", read_committed=committed)

        def from_store(schema=None):
            df = (
                spark.read.format("gazette")
                .option("broker", cluster.broker)
                .option("journals", "bench/events")
                .option("fragmentRoot", cluster.fragment_root)
            )
            return (df.schema(schema) if schema else df).load()

        def text():
            return spark.read.text(local)

        schema = "user STRING"
        # The CSV records' columns: the UUID's, then the message's fields (the source's schema starts after the UUID).
        csv_fields = "user STRING, pad STRING"

        def typed():
            return read(
                spark,
                broker=cluster.broker,
                journals="bench/events",
                schema=csv_fields if args.framing == "csv" else schema,
            )

        def csv():
            return spark.read.schema(f"uuid STRING, {csv_fields}").csv(local)

        def total(df, column) -> int:
            return df.agg(F.sum(F.length(column))).collect()[0][0] or 0

        def counted(df) -> int:
            """count + sum(length(value)), as one number to compare: the sum, checked against the count."""
            n, total = df.agg(F.count("*"), F.sum(F.length("value"))).collect()[0]
            assert n == expected, f"read {n} committed messages, Gazette's reader {expected}"
            return total or 0

        def committed(split: bool):
            # One task (splitCommitted=false), or --pieces pieces (minPartitions) of at least 1 MiB.
            # With --store, both read the persisted fragments from the store.
            df = (
                spark.read.format("gazette")
                .option("broker", cluster.broker)
                .option("journals", "bench/events")
                .option("splitCommitted", str(split).lower())
                .option("bytesPerPartition", str(1 << 20))
                .option("minPartitions", pieces)
            )
            return (df.option("fragmentRoot", cluster.fragment_root) if args.store else df).load()

        readers = {
            "go-raw": lambda: go("--raw")[0],
            "go-uncommitted": lambda: go("--uncommitted", "--acks", "--count")[0],
            "go-committed": lambda: go("--committed", "--count")[0],
            "source-committed": lambda: total(source(True), "value"),
            "source-uncommitted": lambda: total(source(False), "value"),
            "source-split": lambda: total(
                spark.read.format("gazette")
                .option("broker", cluster.broker)
                .option("journals", "bench/events")
                .option("readCommitted", "false")
                .option("minPartitions", pieces)
                .load(),
                "value",
            ),
            "committed-1task": lambda: counted(committed(False)),
            "committed-split": lambda: counted(committed(True)),
            "text": lambda: total(text(), "value"),
            "source+from_json": lambda: total(
                source(True).select(F.from_json(F.col("value").cast("string"), schema).alias("m")), "m.user"
            ),
            "text+from_json": lambda: total(text().select(F.from_json("value", schema).alias("m")), "m.user"),
            "source+schema": lambda: total(typed(), "user"),
            "csv": lambda: total(csv(), "user"),
            "store-committed": lambda: total(from_store(), "value"),
            "store+schema": lambda: total(from_store(csv_fields if args.framing == "csv" else schema), "user"),
            "store+from_json": lambda: total(
                from_store().select(F.from_json(F.col("value").cast("string"), schema).alias("m")), "m.user"
            ),
        }
        try:
            # The JVM compiles the hot paths of the Spark rows as they run, and keeps at it for many
            # runs: after four untimed runs of each, its compilers still spent 0.5-1.0 CPU s in each
            # timed run of a 1.3 s read, on the core the broker needs. A query that runs for hours
            # is past that, so the rows warm up until compiling takes under a tenth of each run.
            jvm_pid = int(jvm.java.lang.ProcessHandle.current().pid())
            spark_rows = [name for name in rows if not name.startswith("go-")]
            for warmed in range(1, 4 * max(1, args.warmup) + 1):
                compiling = {}
                for name in spark_rows:
                    before, t = thread_cpu(jvm_pid), time.monotonic()
                    readers[name]()
                    took = time.monotonic() - t
                    compiling[name] = cpu_by_thread(before, thread_cpu(jvm_pid), COMPILERS) / took
                if warmed >= args.warmup and all(share < 0.1 for share in compiling.values()):
                    break
            if spark_rows:
                shares = ", ".join(f"{name} {share:.0%}" for name, share in compiling.items())
                settled = all(share < 0.1 for share in compiling.values())
                print(
                    f"warm-up: {warmed} untimed runs of each Spark row; compiling in the last: {shares}"
                    + ("" if settled else " (not settled: the JIT's CPU weighs on the timed runs)")
                )
            broker_pid = cluster.state.brokers[0].pid
            results, cpu = {}, {name: (0.0, 0.0, 0.0) for name in rows}
            for _ in range(args.runs):
                for name in rows:
                    # CPU seconds of the broker, of the reader (the Go judge, or Spark's JVM: task,
                    # gRPC, compiler and GC threads) and of the threads that read (tasks and gRPC),
                    # per run: what each byte costs, whatever the machine's load.
                    threads = thread_cpu(jvm_pid)
                    before = (cpu_seconds(broker_pid), children_cpu_seconds(), cpu_seconds(jvm_pid))
                    took, n = timed(profiled(jvm, args.jfr, name, readers[name]), runs=1)
                    after = (cpu_seconds(broker_pid), children_cpu_seconds(), cpu_seconds(jvm_pid))
                    tasks = cpu_by_thread(threads, thread_cpu(jvm_pid), READ_THREADS)
                    if name not in results or took < results[name][0]:
                        results[name] = (took, n)
                    reader = 1 if name.startswith("go-") else 2
                    spent = [after[0] - before[0], after[reader] - before[reader], tasks]
                    cpu[name] = tuple(total + x / args.runs for total, x in zip(cpu[name], spent, strict=True))
        finally:
            spark.stop()

    print(
        f"journal: {size / 2**20:.0f} MiB, {messages} {args.framing} messages of {args.size} bytes, "
        f"{expected} committed"
    )
    what = {"go-raw": "bytes", "go-uncommitted": "messages", "go-committed": "messages"}
    print(
        f"  {'reader':<19} {'read':>11} {'':<16} {'fastest':>9}  {'MiB/s':>8}   CPU s per GiB: broker, reader (reading)"
    )
    for name, (took, n) in results.items():
        broker_cpu, reader_cpu, task_cpu = (x * 2**30 / size for x in cpu[name])
        tasks = "" if name.startswith("go-") else f" ({task_cpu:.2f})"
        print(
            f"  {name:<19} {n:>11} {what.get(name, 'bytes of values'):<16} {took:7.2f} s  {size / took / 2**20:8.1f}"
            f"   {broker_cpu:6.2f} {reader_cpu:6.2f}{tasks}"
        )

    def ratio(ours: str, reference: str, label: str) -> None:
        if ours in results and reference in results:
            print(f"ratio {label:<38} {results[reference][0] / results[ours][0]:.2f} (throughput, >1 is faster)")

    ratio("source-committed", "go-raw", "source-committed / go-raw:")
    ratio("source-uncommitted", "go-raw", "source-uncommitted / go-raw:")
    ratio("source-split", "source-uncommitted", f"source-split ({pieces} pieces) / uncommitted:")
    ratio("committed-split", "committed-1task", f"committed-split ({pieces} pieces) / 1 task:")
    ratio("source-committed", "go-committed", "source-committed / go-committed:")
    ratio("source-uncommitted", "go-uncommitted", "source-uncommitted / go-uncommitted:")
    ratio("source-committed", "text", "source-committed / text:")
    ratio("source+from_json", "text+from_json", "source+from_json / text+from_json:")
    ratio("source+schema", "text+from_json", f"source+schema / text+from_json, {args.size} B:")
    # Gazette's own raw read through the same broker against the file source: where the broker
    # path stands before any framing or parsing.
    ratio("go-raw", "text+from_json", f"Gazette's go-raw (not the connector) / text+from_json, {args.size} B:")
    ratio("source+schema", "csv", f"source+schema / Spark's csv, {args.size} B:")
    ratio("store-committed", "go-raw", "store-committed / go-raw:")
    ratio("store+from_json", "text+from_json", "store+from_json / text+from_json:")
    ratio("store+schema", "text+from_json", f"store+schema / text+from_json, {args.size} B:")
    ratio("store+schema", "csv", f"store+schema / Spark's csv, {args.size} B:")

    # The readers must agree on what they read (timings are never asserted).
    if "go-raw" in results:
        assert results["go-raw"][1] == size, f"go-raw read {results['go-raw'][1]} of {size} bytes"
    if "go-committed" in results:
        assert results["go-committed"][1] == expected, "Gazette's reader disagrees with the committed count"
    if "go-uncommitted" in results:
        assert results["go-uncommitted"][1] == messages, "Gazette's reader disagrees with the message count"
    if "committed-split" in results and "committed-1task" in results:
        assert results["committed-split"][1] == results["committed-1task"][1], "split and whole reads disagree"
    if "source-uncommitted" in results and "text" in results:
        assert results["source-uncommitted"][1] == results["text"][1], "the source and the file disagree"


if __name__ == "__main__":
    main()
