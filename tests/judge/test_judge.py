"""The judge's own tests (tests/judge, `go test`): behaviour of Gazette's reader that the
connector's exactly-once claims are measured against, pinned down on Gazette's code itself."""

import shutil
import subprocess
from pathlib import Path

from conftest import requires_local_binaries

pytestmark = requires_local_binaries

JUDGE = Path(__file__).resolve().parent


def test_the_judges_go_tests_pass():
    assert shutil.which("go"), "Go is missing: `make setup` installs it"
    run = subprocess.run(["go", "test", "-count=1", "."], cwd=JUDGE, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
