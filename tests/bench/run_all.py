"""Every benchmark of the project, one after the other, and one table of what they measured.

Each benchmark prints its findings as lines `ratio <what>: <value> (...)` (the connector
against a reference measured in the same run: >1 is faster) or `result <what>: <value> <unit>
(...)` (a time whose goal the line names). This collects them into one table; nothing is
asserted, the machine decides the numbers. `--tiny` runs each script once on a few rows, for CI to keep them
working.

    python tests/bench/run_all.py [--tiny] [--only sink,latency]
"""

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Real-time runs beside Spark's Kafka connector run on the pyspark it is served for (`make
# setup-bench-kafka` installs it and the connector's package there).
KAFKA_PYTHON = HERE.parents[1] / ".venv-bench-kafka" / "bin" / "python"
ON_KAFKA_PYTHON = {"latency-real-time"}

# name: (script, full-size arguments, tiny arguments or None: not run by --tiny)
BENCHMARKS = {
    # Tiny: one warm-up run, and no more than four while the JIT compiles.
    "source": ("bench_source.py", [], ["--mib", "4", "--warmup", "1"]),
    "backfill": (
        "bench_backfill.py",
        ["--split-mib", "1024"],
        ["--journals", "2", "--mib", "8", "--split-mib", "8", "--runs", "1"],
    ),
    # Typed rows (.schema) against Spark's text source + from_json at the other message sizes.
    # (--tiny runs each script once: these are "source" with other arguments)
    "source-typed-100b": ("bench_source.py", ["--size", "100", "--only", "source+schema,text+from_json"], None),
    # With Go's raw read: where Gazette's own reader through the same broker stands.
    "source-typed-64kib": (
        "bench_source.py",
        ["--size", "65536", "--only", "go-raw,source+schema,text+from_json"],
        None,
    ),
    # The same in local[2] (the broker's and the client's threads beside the task), and read from the store.
    "source-typed-2cores": (
        "bench_source.py",
        ["--cores", "2", "--only", "go-raw,source+schema,text+from_json"],
        None,
    ),
    "source-typed-store-2cores": (
        "bench_source.py",
        ["--store", "--cores", "2", "--only", "store+schema,text+from_json"],
        None,
    ),
    "source-typed-store": ("bench_source.py", ["--store", "--only", "store+schema,text+from_json"], None),
    "source-typed-store-64kib": (
        "bench_source.py",
        ["--store", "--size", "65536", "--only", "store+schema,text+from_json"],
        None,
    ),
    "source-csv": ("bench_source.py", ["--framing", "csv"], None),
    "source-protobuf": ("bench_source.py", ["--framing", "protobuf"], None),
    "source-split-committed": ("bench_source.py", ["--cores", "2", "--only", "committed-1task,committed-split"], None),
    "client": ("bench_client.py", [], ["--mib", "16", "--rounds", "1"]),
    "journals": ("bench_journals.py", [], ["--journals", "20", "--rounds", "2", "--warm-up", "1"]),
    "latency": ("bench_latency.py", [], ["--journals", "5", "--seconds", "5", "--warm-up", "1"]),
    # Real-time mode with 10- and 60-second batches, beside Spark's Kafka connector (same Spark,
    # traffic and batches): a batch end every 10 s is where its tail is.
    "latency-real-time": (
        "bench_latency.py",
        ["--only-real-time", "--journals", "10", "--batch", "10 seconds,60 seconds", "--seconds", "120"],
        None,
    ),
    "decode": ("bench_decode.py", [], ["--rows", "2000"]),
    "sink": ("bench_sink.py", ["--rows", "1000000"], ["--rows", "2000", "--runs", "1"]),
    # Every task's rows into one journal: the plain write against Go's Publishers at the same parallelism.
    "sink-1journal": ("bench_sink.py", ["--rows", "200000", "--journals", "1"], None),
}

FINDING = re.compile(r"^(ratio|result) (.+?): +([-0-9.]+|nan)(.*)$")


def main() -> None:
    parser = argparse.ArgumentParser(description="every benchmark, one table")
    parser.add_argument("--tiny", action="store_true", help="a few rows each: do they still run?")
    parser.add_argument("--only", help="comma-separated benchmarks: " + ", ".join(BENCHMARKS))
    args = parser.parse_args()
    names = (
        args.only.split(",") if args.only else [n for n, b in BENCHMARKS.items() if b[2] is not None or not args.tiny]
    )
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmarks {unknown}; known: {', '.join(BENCHMARKS)}")

    rows, failed, why = [], [], []
    for name in names:
        script, full, tiny = BENCHMARKS[name]
        tiny = tiny if tiny is not None else ["--mib", "4", *full]
        print(f"== {name}: {script} {' '.join(tiny if args.tiny else full)}", flush=True)
        t = time.monotonic()
        python = str(KAFKA_PYTHON) if name in ON_KAFKA_PYTHON else sys.executable
        if not Path(python).exists():
            failed.append(name)
            why.append(f"== {name}: {python} is missing: run `make setup-bench-kafka`")
            continue
        run = subprocess.run(
            [python, str(HERE / script), *(tiny if args.tiny else full)],
            capture_output=True,
            text=True,
        )
        sys.stdout.write(run.stdout)
        if run.returncode != 0:
            failed.append(name)
            sys.stdout.write(run.stderr[-4000:])
            why.append(f"== {name} exited {run.returncode}:\n{run.stderr[-2500:]}")
        found = [FINDING.match(line) for line in run.stdout.splitlines()]
        found = [m for m in found if m]
        if run.returncode == 0 and not found:
            failed.append(name)
            print(f"{name} printed no ratio or result line")
        rows += [(name, m.group(1), m.group(2), m.group(3), m.group(4).strip()) for m in found]
        print(f"({name} took {time.monotonic() - t:.0f} s)\n", flush=True)

    width = max((len(r[2]) for r in rows), default=10)
    named = max(len(n) for n in names)
    print(f"{'benchmark':<{named}} {'kind':<6} {'measure':<{width}} {'value':>8}  notes")
    for name, kind, what, value, notes in rows:
        print(f"{name:<{named}} {kind:<6} {what:<{width}} {value:>8}  {notes}")
    if failed:
        # Last, where a caller showing the end of the output shows why.
        print("\n".join(why), file=sys.stderr)
        raise SystemExit(f"benchmarks that failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
