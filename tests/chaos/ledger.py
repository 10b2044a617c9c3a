"""The ledger of chaos runs (tests/chaos/ledger.md): one row per run of `make chaos`,
`make chaos-real-time` or `make chaos-network` (the commit it ran on, its seed and tally), so that
cycles count across many runs toward the thousands no single run reaches. `make chaos-ledger`
prints the totals; a run appends its row itself (`--no-ledger` leaves it out: make test's short
runs are not counted).
"""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from dataclasses import dataclass, fields

LEDGER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ledger.md")

HEADER = (
    "# Chaos ledger\n\n"
    "One row per chaos run on an exactly-once path, appended by the run itself; `make chaos-ledger` sums\n"
    "them. `kills` and `faults` are what the schedule did; `lost`, `duplicated` and `phantom` are what\n"
    "Gazette's reader found in the output against the input.\n\n"
)
COLUMNS = ("date", "commit", "run", "seed", "cycles", "kills", "faults", "committed", "lost", "duplicated", "phantom")


@dataclass(frozen=True)
class Row:
    date: str
    commit: str
    run: str  # chaos, chaos-real-time, chaos-network, chaos-network-real-time
    seed: int
    cycles: int
    kills: int
    faults: int
    committed: int  # input messages committed, as the judge counted them
    lost: int
    duplicated: int
    phantom: int

    @property
    def clean(self) -> bool:
        return self.lost == self.duplicated == self.phantom == 0 and self.committed > 0

    def line(self) -> str:
        return "| " + " | ".join(str(getattr(self, c)) for c in COLUMNS) + " |"


def _commit() -> str:
    """The commit the run ran on, `-dirty` when the tree differed from it (the ledger aside)."""
    here = os.path.dirname(LEDGER)
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True, check=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ":/", ":(exclude,top)tests/chaos/ledger.md"],
            cwd=here,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return head + ("-dirty" if changed else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# The commit as the run starts (imported then): the tree may move on while it runs.
STARTED_ON = _commit()


def row_of(summary, network: bool) -> Row:
    """The row of a finished run from its Summary (chaos.py's or network_chaos.py's)."""
    run = ("chaos-network" if network else "chaos") + ("-real-time" if summary.real_time else "")
    return Row(
        date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        commit=STARTED_ON,
        run=run,
        seed=summary.seed,
        cycles=summary.cycles,
        kills=sum(summary.kills.values()),
        faults=sum(summary.faults.values()) if network else 0,
        committed=summary.committed,
        lost=summary.lost,
        duplicated=summary.duplicated,
        phantom=summary.phantom,
    )


def append(row: Row, path: str = LEDGER) -> None:
    new = not os.path.exists(path)
    with open(path, "a") as f:
        if new:
            f.write(HEADER)
            f.write("| " + " | ".join(COLUMNS) + " |\n")
            f.write("|" + " --- |" * len(COLUMNS) + "\n")
        f.write(row.line() + "\n")


def read(path: str = LEDGER) -> list[Row]:
    """The ledger's rows; a malformed row fails naming its line."""
    rows = []
    if not os.path.exists(path):
        return rows
    types = {f.name: f.type for f in fields(Row)}
    with open(path) as f:
        for n, text in enumerate(f, 1):
            cells = [c.strip() for c in text.strip().strip("|").split("|")]
            if not text.startswith("|") or cells == list(COLUMNS) or set(cells) == {"---"}:
                continue
            if len(cells) != len(COLUMNS):
                raise ValueError(f"{path}:{n}: {len(cells)} cells, not {len(COLUMNS)}: {text.strip()}")
            try:
                values = {c: (int(v) if types[c] in ("int", int) else v) for c, v in zip(COLUMNS, cells, strict=True)}
            except ValueError as e:
                raise ValueError(f"{path}:{n}: {e}") from None
            rows.append(Row(**values))
    return rows


def totals(rows: list[Row]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        t = out.setdefault(
            r.run, dict(runs=0, cycles=0, kills=0, faults=0, committed=0, lost=0, duplicated=0, phantom=0)
        )
        t["runs"] += 1
        for c in ("cycles", "kills", "faults", "committed", "lost", "duplicated", "phantom"):
            t[c] += getattr(r, c)
    return out


def main() -> None:
    rows = read()
    print(
        f"{'run':<26}{'runs':>6}{'cycles':>8}{'kills':>8}{'faults':>8}{'committed':>11}{'lost':>6}{'dup':>6}{'phantom':>8}"
    )
    for run, t in sorted(totals(rows).items()):
        print(
            f"{run:<26}{t['runs']:>6}{t['cycles']:>8}{t['kills']:>8}{t['faults']:>8}{t['committed']:>11}"
            f"{t['lost']:>6}{t['duplicated']:>6}{t['phantom']:>8}"
        )
    sys.exit(0 if all(r.clean for r in rows) else 1)


if __name__ == "__main__":
    main()
