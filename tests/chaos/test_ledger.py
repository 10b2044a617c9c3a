"""The chaos ledger: rows a run appends read back as written, malformed rows named by their line,
and the ledger kept in the repository parses."""

import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ledger  # noqa: E402


def _summary(real_time=False, **counts):
    base = dict(seed=7, cycles=12, committed=900, lost=0, duplicated=0, phantom=0)
    base.update(counts)
    return SimpleNamespace(
        real_time=real_time, kills=Counter(driver=3, broker=2), faults=Counter(partition=4, reset=1), **base
    )


def test_rows_a_run_appends_read_back_and_sum_per_kind(tmp_path):
    path = str(tmp_path / "ledger.md")
    ledger.append(ledger.row_of(_summary(), network=False), path)
    ledger.append(ledger.row_of(_summary(real_time=True, lost=1), network=True), path)
    ledger.append(ledger.row_of(_summary(cycles=5), network=False), path)
    rows = ledger.read(path)
    assert [r.run for r in rows] == ["chaos", "chaos-network-real-time", "chaos"]
    assert rows[0].kills == 5 and rows[0].faults == 0 and rows[1].faults == 5
    assert [r.clean for r in rows] == [True, False, True]
    totals = ledger.totals(rows)
    assert totals["chaos"]["cycles"] == 17 and totals["chaos"]["runs"] == 2
    assert totals["chaos-network-real-time"]["lost"] == 1


def test_a_malformed_row_is_refused_naming_its_line(tmp_path):
    path = tmp_path / "ledger.md"
    ledger.append(ledger.row_of(_summary(), network=False), str(path))
    with open(path, "a") as f:
        f.write("| 2026-12-06 | abc | chaos | 1 | many | 0 | 0 | 1 | 0 | 0 | 0 |\n")
    with pytest.raises(ValueError, match=r"ledger.md:\d+: .*many"):
        ledger.read(str(path))


def test_the_repository_ledger_parses():
    rows = ledger.read()
    assert all(r.run in ("chaos", "chaos-real-time", "chaos-network", "chaos-network-real-time") for r in rows)
