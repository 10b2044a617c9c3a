"""What `make test` runs, read from make's own database (`make -pq` runs no recipe)."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def variables() -> dict[str, str]:
    out = subprocess.run(["make", "-pq"], cwd=ROOT, capture_output=True, text=True).stdout
    return {m[1]: m[2] for m in re.finditer(r"^([A-Z0-9_]+) :?= ?(.*)$", out, re.M)}


def test_the_suites_the_spark_4_stage_deselects_are_named_and_the_micro_batch_chaos_runs_on_spark_35():
    found = variables()
    deselected = re.findall(r"--deselect \$\(([A-Z0-9_]+)\)", (ROOT / "Makefile").read_text())
    assert deselected, "make test deselects nothing by name: this test reads the wrong recipe"
    for name in deselected:
        assert found.get(name, "").strip(), f"{name} is empty where make test reads it"
    assert found["MICRO_BATCH_CHAOS"] in found["SPARK35_PYTHON_SUITES"].split(), (
        "the micro-batch kill chaos, deselected on Spark 4, runs on Spark 3.5 in no stage"
    )
