"""The client's raw read against Gazette's Go RetryReader, below framing, sequencing and rows.

Writes --mib MiB to one journal, then runs the connector's test-side ClientReadBench
(connector-scala/src/test/scala/io/sparkgazette/bench), which reads the whole journal through
the connector's GazetteClient to nowhere and through the judge's `read --raw` (Gazette's
RetryReader), in alternating rounds, and prints each round's MiB/s and CPU seconds per GiB, and
the ratios. Nothing is asserted about speed.

    python tests/bench/bench_client.py [--mib 256] [--rounds 3] [--jfr FILE]
                                       (--jfr: a Flight Recorder profile of the client's JVM)
"""

import argparse
import subprocess
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "harness"))

import judge  # noqa: E402
from cluster import LocalCluster  # noqa: E402
from specs import journal_specs  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description="the client's raw read against Gazette's Go reader")
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jfr", default=None, help="write a Flight Recorder profile of the client's JVM here")
    args = parser.parse_args()
    block = (b"x" * 1023 + b"\n") * 8192  # 8 MiB
    with LocalCluster(brokers=1) as cluster:
        cluster.apply(journal_specs("bench/", ["raw"], length=1 << 30, codec="NONE"))
        size = 0
        for _ in range(max(1, args.mib // 8)):
            urllib.request.urlopen(
                urllib.request.Request(f"{cluster.broker}/bench/raw", data=block, method="PUT"), timeout=120
            ).read()
            size += len(block)
        print(f"journal: {size >> 20} MiB", flush=True)
        main_class = "io.sparkgazette.bench.ClientReadBench"
        command = f"connector/Test/runMain {main_class} {cluster.broker} bench/raw {size} {args.rounds} {judge.BINARY}"
        profile = (
            [
                f'set connector / Test / javaOptions += "-XX:StartFlightRecording=filename={Path(args.jfr).resolve()},'
                'settings=profile"'
            ]
            if args.jfr
            else []
        )
        run = subprocess.run(
            [str(ROOT / "build" / "sbt"), "-Dsbt.log.noformat=true", "-Dsbt.supershell=false", *profile, command],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        found = (line.removeprefix("[info] ") for line in run.stdout.splitlines())  # sbt's log prefix
        lines = [line for line in found if line.startswith(("  round", "ratio"))]
        print("\n".join(lines))
        if run.returncode != 0 or not lines:
            sys.exit(f"ClientReadBench failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")


if __name__ == "__main__":
    main()
