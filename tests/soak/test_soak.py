"""`make soak`'s tiny version, so that it keeps working: one minute at 1 MiB/s on a standalone
cluster, two rows of samples, and every message once in the output as Gazette's ReadCommittedIter
sees it."""

import re
import subprocess
import sys
from pathlib import Path

from conftest import assembly_jar, requires_local_binaries

pytestmark = requires_local_binaries

SOAK = Path(__file__).resolve().parent / "soak.py"


def test_a_minute_of_soak_is_exactly_once_and_samples_twice():
    assembly_jar()  # fails plainly when it is missing
    soak = subprocess.Popen(
        [sys.executable, str(SOAK), "--minutes", "1", "--rate", str(1 << 20), "--warm-up", "20"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = soak.communicate(timeout=900)
    except subprocess.TimeoutExpired:
        soak.terminate()  # SIGTERM: the soak stops the cluster and Spark it started
        out, err = soak.communicate(timeout=120)
    run = subprocess.CompletedProcess(soak.args, soak.returncode, out, err)
    assert "exactly once" in out, out[-3000:] + run.stderr[-3000:]
    table = out[out.index("  min") : out.index("(heap in MiB")]
    assert len(table.strip().splitlines()) == 3, table  # the header and two samples
    found = re.search(r"in (\d+), out (\d+), lost (\d+), duplicated (\d+), unexpected (\d+)", out)
    n_in, n_out, lost, duplicated, unexpected = map(int, found.groups())
    assert n_in > 30_000 and n_out == n_in and lost == duplicated == unexpected == 0, found.group(0)
    # A minute is too short for the measures to settle (the sink keeps 100 epochs of intents, pools
    # still fill): the verdict is printed, and judged by the hour-long run only.
    assert re.search(r"^verdict: (PASS|FAIL)$", out, re.M), out[-2000:]
    assert run.returncode in (0, 1) and "Traceback" not in run.stderr, run.stderr[-3000:]
