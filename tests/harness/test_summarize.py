"""make test's closing lines (summarize.py): a canceled test counts as skipped, not passed."""

import subprocess
import sys
from pathlib import Path

SUMMARIZE = Path(__file__).resolve().parent / "summarize.py"

REPORT = """<?xml version='1.0' encoding='UTF-8'?>
<testsuite name="S" tests="3" errors="0" failures="1" skipped="0" time="1">
  <testcase classname="S" name="passes" time="0.1"></testcase>
  <testcase classname="S" name="canceled" time="0.1"></testcase>
  <testcase classname="S" name="fails" time="0.1"><failure message="no"/></testcase>
</testsuite>
"""


def summary(tmp_path: Path) -> str:
    out = subprocess.run([sys.executable, str(SUMMARIZE), str(tmp_path)], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def test_a_canceled_test_is_skipped_not_passed(tmp_path):
    (tmp_path / "TEST-S.xml").write_text(REPORT)
    assert summary(tmp_path) == "total: 2 passed, 1 failed, 0 skipped"
    # As sbt's listener leaves it: appended by each run that canceled it.
    (tmp_path / "canceled.txt").write_text("S :: canceled\nS :: canceled\n")
    assert summary(tmp_path) == "total: 1 passed, 1 failed, 1 skipped"
