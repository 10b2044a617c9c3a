"""Every benchmark still runs: `make bench`'s tiny version (each script, not each size of one). Nothing
about the numbers is asserted. BENCH_TINY_ONLY=source runs those named only (`make test` does: each
script costs a cluster and a Spark session; `make bench-tiny` runs them all)."""

import os
import re
import subprocess
import sys
from pathlib import Path

RUN_ALL = Path(__file__).resolve().parent / "run_all.py"
ALL = {"source", "backfill", "client", "journals", "latency", "decode", "sink"}


def test_every_benchmark_runs_and_reports():
    only = [b for b in os.environ.get("BENCH_TINY_ONLY", "").split(",") if b]
    run = subprocess.run(
        [sys.executable, str(RUN_ALL), "--tiny", *(["--only", ",".join(only)] if only else [])],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # The header's padding follows the longest benchmark name.
    table = run.stdout[[*re.finditer(r"^benchmark +kind", run.stdout, re.M)][-1].start() :]
    reported = {line.split()[0] for line in table.splitlines()[1:] if line.strip()}
    assert reported == (set(only) or ALL), table
    if "sink" not in reported:
        return
    for measure in (
        r"ratio +spark-batch/go-publisher",
        r"ratio +spark-plain/go-publisher",
        r"result +read-committed cost of plain output",
    ):
        assert re.search(rf"^sink +{measure} +[0-9.]+", table, re.M), table
