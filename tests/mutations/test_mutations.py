"""`make test-mutations` plants each of its bugs by finding a snippet in the connector's code: a
refactoring that moves one would stop that run long after the change. Here, at once: every
snippet still occurs exactly once where its mutation says."""

import subprocess
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "mutations"))
from mutations import MUTATIONS  # noqa: E402
from run import sample  # noqa: E402


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


def test_make_tests_samples_cover_the_list_over_consecutive_seeds():
    """make test runs one group; the groups of consecutive seeds are disjoint and cover the list."""
    for k in (1, 4, 7, len(MUTATIONS), 2 * len(MUTATIONS)):
        _, _, groups = sample(list(MUTATIONS), k, 0)
        parts = [sample(list(MUTATIONS), k, seed)[0] for seed in range(1000, 1000 + groups)]
        names = [m.name for part in parts for m in part]
        assert sorted(names) == sorted(m.name for m in MUTATIONS)
        assert all(len(part) <= k + 1 and part for part in parts)
        # A seed picks the same group every time, and the next seed the next one.
        assert sample(list(MUTATIONS), k, 1000 + groups)[0] == parts[0]
