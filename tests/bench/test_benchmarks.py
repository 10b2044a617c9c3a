"""Every benchmark still runs: `make bench`'s tiny version (each script, not each size of one). Nothing
about the numbers is asserted."""

import re
import subprocess
import sys
from pathlib import Path

RUN_ALL = Path(__file__).resolve().parent / "run_all.py"


def test_every_benchmark_runs_and_reports():
    run = subprocess.run([sys.executable, str(RUN_ALL), "--tiny"], capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # The header's padding follows the longest benchmark name.
    table = run.stdout[[*re.finditer(r"^benchmark +kind", run.stdout, re.M)][-1].start() :]
    reported = {line.split()[0] for line in table.splitlines()[1:] if line.strip()}
    assert reported == {
        "source",
        "backfill",
        "client",
        "journals",
        "latency",
        "decode",
        "sink",
    }, table
    for measure in (
        r"ratio +spark-batch/go-publisher",
        r"ratio +spark-plain/go-publisher",
        r"result +read-committed cost of plain output",
    ):
        assert re.search(rf"^sink +{measure} +[0-9.]+", table, re.M), table
