"""`make test-mutations` plants each of its bugs by finding a snippet in the connector's code: a
refactoring that moves one would stop that run long after the change. Here, at once: every
snippet still occurs exactly once where its mutation says."""

import subprocess
import sys

from conftest import ROOT


def test_every_mutation_finds_its_snippet_once():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "mutations" / "run.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "each snippet found once" in out.stdout
