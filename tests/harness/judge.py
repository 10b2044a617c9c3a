"""The Go judge (tests/judge/bin/judge) from Python: Gazette's own Publisher and iterators."""

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

BINARY = Path(__file__).resolve().parents[1] / "judge" / "bin" / "judge"


def _run(*args: str) -> str:
    if not BINARY.exists():
        raise FileNotFoundError(f"{BINARY} is missing: run `make setup`")
    out = subprocess.run([str(BINARY), *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"judge {' '.join(args)} failed: {out.stderr.strip()}")
    return out.stdout


def publish(broker: str, journal: str, scenario: str | None = None, seed: int | None = None) -> None:
    """Writes a named scenario, or a seeded random mix, with Gazette's Publisher."""
    which = ["--scenario", scenario] if scenario else ["--random", str(seed)]
    _run("publish", "--broker", broker, "--journal", journal, *which)


def read(broker: str, journal: str, committed: bool = True, direct: bool = False) -> list[dict]:
    """What Gazette's ReadCommittedIter yields (ACKs left out): {journal, begin, end, uuid, flags, payload}.
    `direct`: Gazette's Reader fetches persisted fragments from the signed URLs the broker hands out
    (DoNotProxy) instead of through the broker."""
    mode = ["--committed"] if committed else ["--uncommitted", "--acks"]
    args = ["read", "--broker", broker, "--journal", journal, *mode, *(["--direct"] if direct else [])]
    return [json.loads(line) for line in _run(*args).splitlines() if line]


def each(broker: str, journal: str) -> Iterator[dict]:
    """`read(broker, journal)` one message at a time, for journals too large to hold in memory."""
    if not BINARY.exists():
        raise FileNotFoundError(f"{BINARY} is missing: run `make setup`")
    args = ["read", "--broker", broker, "--journal", journal, "--committed"]
    with subprocess.Popen([str(BINARY), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        for line in p.stdout:
            if line.strip():
                yield json.loads(line)
        err = p.stderr.read()
    if p.returncode != 0:
        raise RuntimeError(f"judge {' '.join(args)} failed: {err.strip()}")


def read_cost(broker: str, journal: str, committed: bool = True) -> tuple[int, int]:
    """(messages, bytes fetched from the brokers, replays included) of reading `journal` with
    Gazette's ReadCommittedIter, or ReadUncommittedIter."""
    mode = "--committed" if committed else "--uncommitted"
    messages, _, fetched = _run("read", "--broker", broker, "--journal", journal, mode, "--count").split()
    return int(messages), int(fetched)
