"""A backfill from a fragment store: J journals of N MiB each, persisted in an S3 store (the
harness's local S3 server), read committed by the source with `count` and `sum(length(value))`,

  - store:   persisted fragments fetched straight from the store through signed URLs
             (`directFragmentReads`, the default), as Gazette's own readers fetch them,
  - brokers: every byte through the broker, which reads the store for the source
             (`directFragmentReads=false`),

printing the throughput ratio and the broker's CPU seconds per GiB read (its process's CPU time),
each measured in the same run. With --split-mib, also one journal of that size read committed by
--cores tasks against one task (`minPartitions`), on local[--cores], and the executor CPU of
each split reader's tasks: after the timed runs, --runs more runs each under a job group of its
own, whose tasks' metrics Spark's monitoring REST API gives (its UI is then on; each measure is
its least over those runs). The split read runs its first
pass as a Spark job while planned, on the same thread, so in the same group, and counts in the
total. CPU, not wall time, shows what the split costs and gains: this 2-core machine shares its
cores with the broker and the store, so tasks that would run side by side on idle cores wait for
one another. The projected time on idle cores is the longest first-pass task then the longest
piece, each at its CPU time, against the one task's.

Spark runs each reader once untimed (the JVM compiles what it runs), then --runs times (the
fastest counts); nothing is asserted about speed.

    python tests/bench/bench_backfill.py [--journals 4] [--mib 256] [--size 1024] [--codec NONE]
                                         [--cores 2] [--split-mib 1024] [--runs 2] [--jfr DIR]
"""

import argparse
import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_source import cpu_seconds, served_from_store, write  # noqa: E402
from cluster import LocalCluster, free_port  # noqa: E402
from specs import NDJSON, journal_specs  # noqa: E402
from task_metrics import group_stages, settle  # noqa: E402
from timing import profiled, timed  # noqa: E402

FRAGMENT = 16 << 20


class Discard(io.RawIOBase):
    def write(self, b) -> int:
        return len(b)


def main() -> None:
    parser = argparse.ArgumentParser(description="a backfill from a fragment store, against one through the broker")
    parser.add_argument("--journals", type=int, default=4)
    parser.add_argument("--mib", type=int, default=256, help="size of each journal")
    parser.add_argument("--size", type=int, default=1024, help="bytes per message")
    parser.add_argument("--codec", default="NONE", help="the fragments' compression codec")
    parser.add_argument("--cores", type=int, default=2, help="Spark's local cores")
    parser.add_argument("--split-mib", type=int, default=0, help="also one journal this large, --cores tasks / 1")
    parser.add_argument("--runs", type=int, default=2, help="runs of each reader; the fastest counts")
    parser.add_argument("--jfr", default=None, help="directory for a Flight Recorder profile of each row")
    args = parser.parse_args()

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from spark_gazette import configure_spark_with_gazette

    with LocalCluster(brokers=1, store="s3") as cluster:
        names = [f"j{i}" for i in range(args.journals)] + (["large"] if args.split_mib else [])
        cluster.apply(
            journal_specs(
                "backfill/",
                names,
                content_type=NDJSON,
                length=FRAGMENT,
                codec=args.codec,
                store=cluster.store_url(),
                refresh="1s",
            )
        )
        sizes = {}
        for name in names:
            mib = args.split_mib if name == "large" else args.mib
            sizes[name] = write(cluster.broker, f"backfill/{name}", mib, args.size, Discard())
        for name in names:
            served_from_store(cluster, f"backfill/{name}", sizes[name][0] - FRAGMENT, timeout=300)
        total_bytes = sum(sizes[n][0] for n in names if n != "large")

        ui_port = free_port()  # the UI serves the REST API's task metrics of the split readers
        spark = configure_spark_with_gazette(
            SparkSession.builder.master(f"local[{args.cores}]")
            .config("spark.ui.enabled", "true" if args.split_mib else "false")
            .config("spark.ui.port", str(ui_port))
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.log.level", "ERROR")
        ).getOrCreate()
        jvm = spark.sparkContext._jvm
        ui = f"http://127.0.0.1:{ui_port}/api/v1/applications/{spark.sparkContext.applicationId}"

        def backfill(journals: list[str], **options: str):
            df = (
                spark.read.format("gazette")
                .option("broker", cluster.broker)
                .option("journals", ",".join(f"backfill/{j}" for j in journals))
                .options(**options)
                .load()
            )
            return tuple(df.agg(F.count("*"), F.sum(F.length("value"))).collect()[0])

        small = [n for n in names if n != "large"]
        readers = {
            "store": (lambda: backfill(small), total_bytes),
            "brokers": (lambda: backfill(small, directFragmentReads="false"), total_bytes),
        }
        if args.split_mib:
            readers["split-1-task"] = (lambda: backfill(["large"], minPartitions="1"), sizes["large"][0])
            readers[f"split-{args.cores}-tasks"] = (
                lambda: backfill(["large"], minPartitions=str(args.cores)),
                sizes["large"][0],
            )
        try:
            for fn, _ in readers.values():
                fn()
            broker_pid = cluster.state.brokers[0].pid
            results = {}
            for name, (fn, size) in readers.items():
                before = cpu_seconds(broker_pid)
                took, out = timed(profiled(jvm, args.jfr, name, fn), runs=args.runs)
                broker_cpu = (cpu_seconds(broker_pid) - before) / args.runs
                results[name] = (took, out, size, broker_cpu)
            # --runs more runs of each split reader, untimed, taking turns, each under a job group of
            # its own, for its tasks' CPU.
            split = [n for n in readers if n.startswith("split-")]
            for run in range(max(1, args.runs)):
                for name in split:
                    spark.sparkContext.setJobGroup(f"{name}-{run}", f"{name}: task metrics")
                    readers[name][0]()
            if split:
                settle(spark, ui)
            runs = {name: [group_stages(ui, f"{name}-{run}") for run in range(max(1, args.runs))] for name in split}
        finally:
            spark.stop()

    print(
        f"journals: {len(small)} of {args.mib} MiB, {args.size}-byte ndjson messages, {args.codec} fragments of "
        f"{FRAGMENT >> 20} MiB in S3" + (f"; one of {args.split_mib} MiB" if args.split_mib else "")
    )
    print(f"  {'reader':<16} {'rows':>10} {'fastest':>9}  {'MiB/s':>8}   broker CPU s per GiB")
    for name, (took, (rows, _), size, broker_cpu) in results.items():
        print(f"  {name:<16} {rows:>10} {took:7.2f} s  {size / took / 2**20:8.1f}   {broker_cpu * 2**30 / size:8.3f}")

    # Each split reader's tasks: all of them, the first pass's, and the pieces' (the scan: the
    # read's first stage; a shuffle and a one-task final stage follow it). Each measure is its least
    # over the runs; the run whose tasks took the least CPU in all is printed, and gives the spread.
    def scan(ss):
        return next(s for s in ss if not s.first_pass)

    stages = {name: min(rs, key=lambda ss: sum(sum(s.cpu) for s in ss)) for name, rs in runs.items()}
    pieces_cpu = {name: min(sum(scan(ss).cpu) for ss in rs) for name, rs in runs.items()}
    task_cpu, first_pass, pieces = {}, {}, {}
    if stages:
        print(f"  {'split reader':<16} {'tasks':>5}  {'executor CPU s':>14}  {'first pass s':>12}   pieces' wall s")
    for name, ss in stages.items():
        task_cpu[name] = sum(sum(s.cpu) for s in ss)
        first_pass[name] = [c for s in ss if s.first_pass for c in s.cpu]
        pieces[name] = scan(ss)
        print(
            f"  {name:<16} {sum(len(s.cpu) for s in ss):>5}  {task_cpu[name]:>14.2f}  {sum(first_pass[name]):>12.2f}"
            f"   {min(pieces[name].wall):.2f}–{max(pieces[name].wall):.2f}"
        )

    def ratio(ours: str, reference: str, label: str, what: str = "throughput, >1 is faster") -> None:
        if ours in results and reference in results:
            print(f"ratio {label:<40} {results[reference][0] / results[ours][0]:.2f} ({what})")

    ratio("store", "brokers", "backfill store / brokers:")
    s, b = results["store"], results["brokers"]
    cpu = (s[3] / s[2]) / (b[3] / b[2]) if b[3] > 0 else float("nan")
    print(f"ratio {'broker CPU per GiB, store / brokers:':<40} {cpu:.3f} (goal <= 0.1; <1 is cheaper)")
    ratio(f"split-{args.cores}-tasks", "split-1-task", f"read committed, {args.cores} tasks / 1:")
    if stages:
        one, many, n = "split-1-task", f"split-{args.cores}-tasks", args.cores
        wall = pieces[many].wall
        # On idle cores: the longest first-pass task, then the longest piece, each at its CPU time.
        projected = (max(first_pass[many], default=0) + max(pieces[many].cpu)) / max(pieces[one].cpu)
        for label, value, goal in (
            (f"split CPU, {n} tasks / 1 (all tasks, first pass included):", task_cpu[many] / task_cpu[one], "1.25"),
            (
                f"split CPU, {n} pieces / 1 task (first pass left out):",
                pieces_cpu[many] / pieces_cpu[one],
                "1.0",
            ),
            ("split pieces' wall spread, max / min:", max(wall) / min(wall), "1.20"),
            (f"split projected time on idle cores, {n} tasks / 1:", projected, f"1.25/{n} = {1.25 / n:.2f}"),
        ):
            print(f"ratio {label:<40} {value:.2f} (goal <= {goal})")

    # The readers must agree on what they read (timings are never asserted).
    assert results["store"][1] == results["brokers"][1], "the store and the brokers disagree"
    committed = sum(sizes[n][2] for n in small)
    assert results["store"][1][0] == committed, f"{results['store'][1][0]} rows, Gazette's count is {committed}"
    if args.split_mib:
        one, many = results["split-1-task"][1], results[f"split-{args.cores}-tasks"][1]
        assert one == many, f"one task read {one}, {args.cores} tasks {many}"
        assert one[0] == sizes["large"][2], (
            f"{one[0]} rows, Gazette's count of committed messages is {sizes['large'][2]}"
        )


if __name__ == "__main__":
    main()
