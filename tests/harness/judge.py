"""The Go judge (tests/judge/bin/judge) from Python: Gazette's own Publisher and iterators."""

import json
import subprocess
import threading
import time
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


class Tail:
    """`judge tail`: Gazette's ReadCommittedIter following `journals` (blocking reads, from
    `offset`, or each journal's write head with -1), collecting each committed message the moment
    it is read as {journal, begin, end, uuid, flags, payload, seen}, `seen` in Unix seconds. What a
    read-committed reader sees, and when. Open once every read is; stopped on leaving the block.

        with judge.Tail(broker, ["out/part-0"]) as tail:
            ...
            tail.wait(lambda rows: len(rows) >= 10)
    """

    def __init__(self, broker: str, journals: list[str], offset: int = 0) -> None:
        if not BINARY.exists():
            raise FileNotFoundError(f"{BINARY} is missing: run `make setup`")
        self.args = ["tail", "--broker", broker, "--journals", ",".join(journals), "--offset", str(offset)]
        self.rows: list[dict] = []
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "Tail":
        self._proc = subprocess.Popen(
            [str(BINARY), *self.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        ready = self._proc.stderr.readline()
        if ready.strip() != "ready":
            self._proc.kill()
            err = f"{ready.strip()} {self._proc.stderr.read().strip()}"
            raise RuntimeError(f"judge {' '.join(self.args)} failed: {err}")
        self._thread = threading.Thread(target=self._collect, daemon=True)
        self._thread.start()
        return self

    def _collect(self) -> None:
        for line in self._proc.stdout:
            if line.strip():
                row = json.loads(line)
                with self._lock:
                    self.rows.append(row)

    def snapshot(self) -> list[dict]:
        with self._lock:
            return list(self.rows)

    def wait(self, done, timeout: float = 60.0) -> list[dict]:
        """The rows read so far, once `done(rows)` holds; TimeoutError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not done(rows := self.snapshot()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"judge tail: {len(rows)} rows after {timeout:.0f} s")
            time.sleep(0.01)
        return rows

    def __exit__(self, *exc) -> None:
        self._proc.stdin.close()  # tail stops when its stdin closes
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._thread.join(10)
        err = self._proc.stderr.read().strip()
        if self._proc.returncode not in (0, -9) and exc[0] is None:
            raise RuntimeError(f"judge {' '.join(self.args)} failed: {err}")
