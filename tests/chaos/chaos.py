"""Chaos: a gazette -> Spark -> gazette pipeline (tests/chaos/query.py: read committed, written
exactly once) on a Spark standalone cluster (a master, two workers, executors in their own JVMs)
and three Gazette brokers (journals replicated twice), with live traffic from Gazette's Go
Publisher (`judge traffic`: transactions, rollbacks, duplicate re-sends, messages without a
UUID). Each cycle waits until the query commits a batch, then SIGKILLs, at a random moment, one of:
the driver (the query's whole process, restarted from its checkpoint), an executor (its worker
starts another), or a broker (started again). Then traffic stops, the query drains to the write
heads, and Gazette's ReadCommittedIter judges: every committed input message is in the output
exactly once (lost, duplicated and phantom messages are counted).

With --real-time the query runs in Spark's real-time mode, its rows carrying their input message
(`origin`), from which the sink derives each row's UUID. Spark retries a real-time task whose
executor was lost within the batch (the zombie attempt relies on it), but a kill of the driver, and
at times of an executor or a broker, fails the query: it is started again from its checkpoint, and
such an exit counts as the kill's, not as a failure, when it comes within CAUSE_WINDOW of a kill
the query saw and its error is not one about the data (DATA_ERRORS, which no kill explains). The
batch that ran again writes again what it wrote before: readers must drop each copy. Messages
without a UUID are exactly once only in micro-batches; in real-time mode the sink writes them at
least once, so their copies are counted apart (`repeated without a UUID`) and fail nothing. The
drain also runs in real-time mode (a checkpoint last run in real time is refused by micro-batches):
until a committed batch ends at the write heads the traffic left.

In real-time mode the query also has zombie attempts (the sink's `test.sinkFault=task-zombie`, in
every ZOMBIE_EVERY-th batch from the first): the first attempt of a batch's first task
holds its first rows unappended, fails the task to Spark, and appends them from a thread of its
own over three seconds, while Spark runs the task again and the next batches run; the summary
counts the batches that had one (from the driver's log), and the drain has none. A query's first
batches end before its executors read a row (no rows, no zombie), so the first kill waits until
the first zombie struck.

The traffic has rollbacks in both modes (--no-rollbacks leaves them out). A rollback re-appends
an older ACK, after which Gazette's readers go back to it for that producer: messages committed
since, re-sent, are committed again at another offset (Gazette delivers them twice), and
messages rolled back before, re-sent, are committed for the first time, at clocks below those
already committed. Each committed input message, at its offset, must be in the output exactly
once; inputs that Gazette delivers more than once (one UUID committed at several offsets) are
counted apart (`committed again after a rollback`), each delivery written once.

    python tests/chaos/chaos.py [--cycles N] [--seed S] [--rate R] [--minutes M] [--real-time] [--no-rollbacks]
"""

from __future__ import annotations

import argparse
import functools
import http.client
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "harness"))

import judge  # noqa: E402
import ledger  # noqa: E402
from cluster import LocalCluster, terminate  # noqa: E402
from jars import assembly_jar  # noqa: E402
from spark_standalone import SparkStandalone  # noqa: E402
from specs import journal_specs  # noqa: E402

JOURNALS = 2
KINDS = ("driver", "executor", "broker")
PROGRESS_TIMEOUT = 600.0  # seconds without a committed batch before the query counts as stalled (a loaded
# 2-core machine takes minutes to start a driver and its executors)
ZOMBIE_EVERY = 5  # real-time: a zombie attempt in every 5th batch (of 2 s), from the first
CAUSE_WINDOW = 60.0  # real-time: seconds after a kill in which the query's exit counts as the kill's
DATA_ERRORS = (  # error conditions of the connector that no kill explains
    "GAZETTE_SINK_INVALID",
    "GAZETTE_DATA_LOSS",
    "GAZETTE_MALFORMED_MESSAGE",
    "GAZETTE_CHECKPOINT_CORRUPT",
    "GAZETTE_UNSUPPORTED",
    "GAZETTE_INTERNAL",
)


@dataclass
class Summary:
    seed: int
    real_time: bool = False
    cycles: int = 0
    seconds: float = 0.0
    kills: Counter = field(default_factory=Counter)
    failures: int = 0  # query exits the chaos did not cause directly (e.g. all brokers of a journal gone)
    caused: Counter = field(default_factory=Counter)  # real-time: query exits that a kill caused, by its kind
    stalls: int = 0
    committed: int = 0
    written: int = 0
    lost: int = 0
    duplicated: int = 0
    phantom: int = 0
    repeated_without_uuid: int = 0  # real-time: extra copies of input messages that had no UUID
    zombies: int = 0  # real-time: batches that had a zombie attempt
    recommitted: int = 0  # committed input messages whose UUID an earlier committed message has
    examples: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        # A query that failed or stalled by itself is a defect even when a restart hides it from
        # the counts: the kills are the only failures the pipeline is allowed.
        return self.lost == self.duplicated == self.phantom == self.failures == self.stalls == 0 and self.committed > 0

    def __str__(self) -> str:
        per = self.seconds / max(self.cycles, 1)
        mode = " (real-time mode)" if self.real_time else ""
        return "\n".join(
            [
                f"chaos{mode}: seed {self.seed}, {self.cycles} cycles in {self.seconds:.0f} s ({per:.1f} s a cycle)",
                "kills: "
                + ", ".join(f"{k} {self.kills[k]}" for k in KINDS)
                + f"; the query also failed by itself {self.failures} times and stalled {self.stalls} times",
                *(
                    [
                        "query exits the kills caused (restarted from the checkpoint): "
                        + ", ".join(f"{k} {self.caused[k]}" for k in KINDS),
                        f"batches with a zombie attempt appending beside Spark's retry: {self.zombies}",
                    ]
                    if self.real_time
                    else []
                ),
                f"judged by Gazette's ReadCommittedIter: {self.committed} committed input messages, "
                f"{self.written} committed output messages; committed again after a rollback: {self.recommitted}",
                *(
                    [f"repeated without a UUID (at least once by the sink's contract): {self.repeated_without_uuid}"]
                    if self.real_time
                    else []
                ),
                f"lost {self.lost}, duplicated {self.duplicated}, phantom {self.phantom}, failed by itself "
                f"{self.failures}, stalled {self.stalls}: {'OK' if self.ok else 'FAILED'}",
                *(f"  e.g. {e}" for e in self.examples[:10]),
            ]
        )


class Query:
    """The query's process; killed with SIGKILL to its process group, so its JVM dies with it."""

    def __init__(
        self, master: str, brokers: str, checkpoint: str, log: str, real_time: bool = False, fault: str | None = None
    ):
        # A copy of its own: a build during a run of hours must not take the jar from under a restart.
        self.jar = os.path.join(os.path.dirname(checkpoint), "connector.jar")
        shutil.copyfile(assembly_jar(), self.jar)
        self.args = [sys.executable, str(HERE / "query.py"), master, brokers, checkpoint, self.jar]
        self.args += ["--real-time"] if real_time else []
        self.fault = ["--sink-fault", fault] if fault else []  # not while it drains
        self.checkpoint, self.log, self.proc = checkpoint, log, None
        self.started = 0.0  # when the running process started (monotonic)

    def start(self, drain: bool = False, heads: dict | None = None) -> None:
        self.started = time.monotonic()
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                self.args + (["--drain"] if drain else self.fault) + (["--heads", json.dumps(heads)] if heads else []),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def kill(self) -> None:
        if self.proc:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def exited(self) -> bool:
        return self.proc.poll() is not None

    def last_error(self) -> str:
        with open(self.log, errors="replace") as log:
            errors = [line.strip() for line in log if "Exception" in line or "Error" in line]
        return errors[-1][:300] if errors else "no error logged"

    def batches(self) -> int:
        """Batches committed: the last one's id and one (Spark keeps only the last 100 files)."""
        commits = Path(self.checkpoint, "commits")
        return (
            max((int(p.name) + 1 for p in commits.iterdir() if p.name.isdigit()), default=0) if commits.exists() else 0
        )


def run(
    cycles: int,
    seed: int,
    rate: int = 20,
    out=print,
    minutes: float = 0,
    kinds=KINDS,
    real_time: bool = False,
    rollbacks: bool = True,
    keep: bool = False,
) -> Summary:
    rng, summary, started = random.Random(seed), Summary(seed, real_time), time.monotonic()
    work = tempfile.mkdtemp(prefix="chaos-")
    mode = f" (real-time mode, traffic {'with' if rollbacks else 'without'} rollbacks)" if real_time else ""
    out(f"chaos{mode}: seed {seed}, {cycles} cycles, work in {work}")
    ins = [f"chaos/in/part-{i}" for i in range(JOURNALS)]
    outs = [f"chaos/out/part-{i}" for i in range(JOURNALS)]
    traffic = query = None
    with LocalCluster(brokers=3, root=os.path.join(work, "gazette")) as gazette, SparkStandalone(workers=2) as spark:
        try:
            for prefix in ("chaos/in/", "chaos/out/"):
                gazette.apply(journal_specs(prefix, [f"part-{i}" for i in range(JOURNALS)], replication=2))
            brokers = ",".join(b.endpoint for b in gazette.state.brokers)
            with open(os.path.join(work, "traffic.log"), "ab") as log:
                traffic = subprocess.Popen(
                    [
                        str(judge.BINARY),
                        "traffic",
                        "--broker",
                        gazette.broker,
                        "--journals",
                        ",".join(ins),
                        "--random",
                        str(seed),
                        "--rate",
                        str(rate),
                        *([] if rollbacks else ["--no-rollbacks"]),
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            zombie = f"task-zombie:0/{ZOMBIE_EVERY}"  # from the first batch: a short run commits only a few
            query = Query(
                spark.master,
                brokers,
                os.path.join(work, "checkpoint"),
                os.path.join(work, "query.log"),
                real_time,
                zombie if real_time else None,
            )
            query.start()
            if real_time:
                _await_zombie(query, summary, out, spark, work)
            schedule: list[str] = []
            last_kill: tuple[str, float] | None = None  # the last kill's kind and time (monotonic)
            for cycle in range(1, cycles + 1):
                if minutes and time.monotonic() - started > minutes * 60:
                    out(f"stopping after {cycle - 1} cycles: --minutes {minutes:g} are up")
                    break
                schedule = schedule or rng.sample(kinds, len(kinds))  # each kind once in every len(kinds) cycles
                kind, delay, pick = schedule.pop(), rng.uniform(0, 3), rng.randrange(1 << 30)
                if kind == "broker" and summary.kills["broker"]:  # before the first, every fragment is on two brokers
                    # First, so that its wait is neither the pause nor the kill's window; exits as they come.
                    _await_persisted(gazette, ins + outs, functools.partial(_restarted, query, summary, out, last_kill))
                _await_progress(query, summary, out, spark, work, last_kill)
                batch = query.batches() - 1
                time.sleep(delay)
                at = time.monotonic()  # before a killed driver's restart, which the kill cannot fail
                what = _kill(kind, pick, query, spark, gazette, rng)
                summary.kills[kind] += what is not None
                last_kill = (kind, at) if what else last_kill
                summary.cycles = cycle
                out(
                    f"cycle {cycle} at {time.monotonic() - started:.0f}s: {what or f'no {kind} to kill'}"
                    f" {delay:.2f}s after batch {batch} committed"
                )
            out("stopping traffic")
            traffic.send_signal(signal.SIGTERM)
            if traffic.wait(timeout=180) != 0:
                raise RuntimeError(f"judge traffic failed; see {work}/traffic.log")
            if real_time:  # the last kill may have failed the query: its exit is the kill's
                _note_exit(query, summary, out, last_kill, restart=False)
            query.kill()
            _await_whole(gazette, ins, out)
            heads = _heads(gazette, ins) if real_time else None
            summary.failures += _drain(query, out, heads=heads)
            _await_whole(gazette, outs, out)
            _judge(gazette, ins, outs, summary, real_time)
            summary.zombies = _zombies(query.log) if real_time else 0
        finally:
            if query:
                query.kill()
            if traffic:
                terminate(traffic.pid)
    summary.seconds = time.monotonic() - started
    if summary.ok and not keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        out(f"logs and checkpoint kept in {work}")
    return summary


def _await_progress(
    query: Query, summary: Summary, out, spark: SparkStandalone, work: str, last_kill: tuple[str, float] | None = None
) -> None:
    """Until the query commits one more batch, restarting it when it exits or stalls (after saving
    the threads of its driver and executors, to see where it waited)."""
    base, since = query.batches(), time.monotonic()
    while query.batches() <= base:
        if not _restarted(query, summary, out, last_kill) and time.monotonic() - since > PROGRESS_TIMEOUT:
            summary.stalls += 1
            dump = _dump_threads(query, spark, os.path.join(work, f"stall-{summary.stalls}"))
            out(f"  no batch committed in {PROGRESS_TIMEOUT:.0f}s; threads saved in {dump}; restarting the query")
            query.kill()
            query.start()
            since = time.monotonic()
        time.sleep(0.2)


def _restarted(query: Query, summary: Summary, out, last_kill: tuple[str, float] | None) -> bool:
    """Whether the query had exited, and was started again (the exit judged as it came)."""
    if not query.exited():
        return False
    if summary.real_time:
        _note_exit(query, summary, out, last_kill)
    else:
        summary.failures += 1
        out(f"  the query exited by itself (code {query.proc.returncode}: {query.last_error()}); restarting it")
        query.start()
    return True


def _note_exit(query: Query, summary: Summary, out, last_kill: tuple[str, float] | None, restart: bool = True) -> None:
    """Real-time mode: counts an exit of the query as the last kill's when that kill came while
    this process ran, at most CAUSE_WINDOW before now, and its error is not about the data;
    otherwise as a failure. Restarts it."""
    if not query.exited():
        return
    now, why = time.monotonic(), f"code {query.proc.returncode}: {query.last_error()}"
    about_data = any(e in why for e in DATA_ERRORS)
    if last_kill and query.started <= last_kill[1] and now - last_kill[1] <= CAUSE_WINDOW and not about_data:
        summary.caused[last_kill[0]] += 1
        out(f"  the query failed {now - last_kill[1]:.0f}s after the {last_kill[0]} kill ({why}); restarting it")
    else:
        summary.failures += 1
        out(f"  the query exited by itself ({why}); restarting it")
    if restart:
        query.start()


def _dump_threads(query: Query, spark: SparkStandalone, into: str) -> str:
    os.makedirs(into, exist_ok=True)
    driver = subprocess.run(["pgrep", "-g", str(query.proc.pid), "java"], capture_output=True, text=True).stdout.split()
    for role, pids in (("driver", driver), ("executor", [str(p) for p in spark.executor_pids()])):
        for pid in pids:
            with open(os.path.join(into, f"{role}-{pid}.txt"), "w") as f:
                subprocess.run(["jstack", "-l", pid], stdout=f, stderr=subprocess.STDOUT, timeout=60)
    return into


def _kill(
    kind: str, pick: int, query: Query, spark: SparkStandalone, gazette: LocalCluster, rng, wait: bool = True
) -> str | None:
    """Kills one of `kind` (and starts a driver or a broker again); `wait`: until a broker started
    again takes appends (a caller whose fault must end on time waits after it instead)."""
    if kind == "driver":
        query.kill()
        query.start()
        return f"killed the driver (pid {query.proc.pid} now)"
    if kind == "executor":
        pids = spark.executor_pids()
        if not pids:
            return None
        pid = pids[pick % len(pids)]
        os.kill(pid, signal.SIGKILL)
        return f"killed executor pid {pid} (of {len(pids)})"
    index = pick % len(gazette.state.brokers)
    down = rng.uniform(0, 2)
    gazette.kill_broker(index)
    time.sleep(down)
    gazette.start_broker(index)
    if wait:
        gazette.wait_writable(timeout=120)
    return f"killed broker {index}, restarted after {down:.1f}s"


def _await_zombie(query: Query, summary: Summary, out, spark: SparkStandalone, work: str) -> None:
    """Real-time: until the query's first zombie attempt strikes (the driver logs its task's
    failure), or PROGRESS_TIMEOUT passes; the first kill waits for it. A query's first batches
    end before its executors (fetching the jar, connecting) read a row: a batch without rows has
    no zombie, and a short run's kills, each a cycle after the last, restart the query before it
    reaches a batch with rows in the schedule."""
    since = time.monotonic()
    while not _zombies(query.log) and time.monotonic() - since < PROGRESS_TIMEOUT:
        _await_progress(query, summary, out, spark, work)
    out(f"first zombie attempt {'struck' if _zombies(query.log) else 'not seen'} after {time.monotonic() - since:.0f}s")


def _zombies(log: str) -> int:
    """The batches whose zombie attempt Spark gave up on, as the driver logged them."""
    struck = re.compile(r"injected zombie attempt in batch (\d+)")
    with open(log, errors="replace") as lines:
        return len({m.group(1) for m in map(struck.search, lines) if m})


def _drain(query: Query, out, attempts: int = 5, heads: dict | None = None) -> int:
    """Runs the query to the write heads (availableNow; in real-time mode, until a committed batch
    ends at `heads`), again if a run fails; how many runs failed. Nothing is killed while it
    drains: a failed run is a failure of the pipeline's own."""
    for attempt in range(1, attempts + 1):
        query.start(drain=True, heads=heads)
        try:
            if query.proc.wait(timeout=600) == 0:
                out(f"drained (run {attempt})")
                return attempt - 1
        except subprocess.TimeoutExpired:
            pass
        query.kill()
        out(f"  drain run {attempt} failed; again")
    raise RuntimeError(f"the query did not drain in {attempts} runs; see {query.log}")


def _await_whole(gazette: LocalCluster, journals: list[str], out, timeout: float = 600.0) -> None:
    """Until every journal is readable to its write head through each broker of its route. After a
    broker's SIGKILL, the fragment its surviving peer held is readable through the others only
    once that peer has persisted it (a persister's rounds of a minute, then the primary's next
    listing of the store: two to four minutes); until then their readers stop there as at a
    write head: at a gap, or, when no byte follows it, short of the journal's end, which no
    listing of theirs shows."""
    deadline = time.monotonic() + timeout
    while True:
        waiting = _unreadable(gazette, journals)
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"journals {waiting} still not readable to their write heads after {timeout:.0f}s")
        out(f"  waiting for the fragments of {', '.join(waiting)} to be persisted")
        time.sleep(10)


def _await_persisted(
    gazette: LocalCluster, journals: list[str], tick, timeout: float = 600.0, fail: bool = True
) -> str:
    """Until every journal is readable to its write head through each broker of its route and
    every closed fragment is in the store, calling `tick` meanwhile. A broker killed and started
    again at once may take its journals back as primary with a new spool, leaving the fragment it
    was writing on its peer alone, as a replica's, which persists it minutes later. Killing that
    peer first would lose it for good (a gap the judge would count as lost messages): more than
    replication 2 promises to survive. Past `timeout`, fails saying why each journal is waited for,
    or with `fail` false returns that ("" once every journal is)."""
    deadline = time.monotonic() + timeout
    # Only what was written before now: on a live journal of small fragments some fragment has
    # always just closed, its persist a flush interval away.
    heads = _heads(gazette, journals)
    while True:
        pending = list(_unreadable_why(gazette, journals, persisted=True, before=heads))
        if not pending:
            return ""
        if time.monotonic() > deadline:
            why = "; ".join(
                f"{j}: {reason}"
                for j, reason in _unreadable_why(gazette, pending, persisted=True, before=heads).items()
            )
            if fail:
                raise RuntimeError(f"fragments still not persisted after {timeout:.0f}s: {why}")
            return why
        for _ in range(10):
            tick()
            time.sleep(0.2)


def _unreadable(gazette: LocalCluster, journals: list[str], persisted: bool = False) -> list[str]:
    """The journals that some broker of their route cannot serve whole: a broker reads and lists
    from its own index (Gazette serves reads from any replica), and a replica's index holds the
    fragment its spool wrote, which the primary's lacks until it is persisted and listed. Whole
    is no gap, from offset 0 to the write head (asked first, so that appends after it cannot
    hide a short listing), and with `persisted` every closed fragment in the store."""
    return list(_unreadable_why(gazette, journals, persisted))


def _unreadable_why(
    gazette: LocalCluster, journals: list[str], persisted: bool = False, before: dict | None = None
) -> dict[str, str]:
    """As _unreadable, saying for each such journal what its first broker short of whole lacks;
    with `before`, only fragments that begin before each journal's offset there must be persisted."""
    heads = _heads(gazette, journals)
    routes = {j["spec"]["name"]: j.get("route", {}).get("endpoints", []) for j in gazette.journals()}
    waiting = {}
    for j in journals:
        for endpoint in routes.get(j) or [None]:
            try:
                spans = _fragments(gazette, f"name={j}", endpoint).get(j, [])
            except subprocess.SubprocessError:  # a broker just started: its index is not loaded yet
                spans = None
            end = spans[-1][1] if spans else 0
            local = [(b, e) for b, e in _unstored(spans or []) if before is None or b < before.get(j, math.inf)]
            why = (
                "no route"
                if endpoint is None
                else f"{endpoint} lists nothing yet"
                if spans is None
                else f"{endpoint} lists a gap"
                if _has_gap(spans)
                else f"{endpoint} lists to {end}, short of the write head {heads[j]}"
                if end < heads[j]
                else f"{endpoint} lists {len(local)} closed fragment(s) not in the store, from {local[0][0]}"
                if persisted and local
                else ""
            )
            if why:
                waiting[j] = why
                break
    return waiting


def _heads(gazette: LocalCluster, journals: list[str]) -> dict[str, float]:
    """Each journal's write head; infinite while its primary takes no append (a pipeline starting)."""
    heads: dict[str, float] = {}
    for j in journals:
        try:
            heads[j] = gazette.write_head(j)
        except (OSError, http.client.HTTPException):
            heads[j] = math.inf
    return heads


def _fragments(
    gazette: LocalCluster, selector: str = "name:prefix=chaos/", broker: str | None = None
) -> dict[str, list[tuple[int, int, bool]]]:
    """Each journal's fragments as (begin, end, persisted), in order, as `broker` indexes them."""
    listed = gazette.gazctl_json("fragments", "--selector", selector, broker=broker, timeout=60)
    spans: dict[str, list[tuple[int, int, bool]]] = {}
    for f in map(json.loads, listed.splitlines()):
        spec = f.get("spec")
        if spec:
            spans.setdefault(spec["journal"], []).append(
                (int(spec.get("begin", 0)), int(spec.get("end", 0)), bool(spec.get("backing_store")))
            )
    return {j: sorted(fs) for j, fs in spans.items()}


def _unstored(spans: list[tuple[int, int, bool]]) -> list[tuple[int, int]]:
    """The closed fragments (all but the last) whose bytes no fragment in the store covers. A
    broker's index may keep a fragment its own spool wrote beside the store's copy of those bytes
    cut at other offsets (a peer took the journal over and closed it elsewhere): the bytes are
    safe all the same."""
    stored = sorted((b, e) for b, e, s in spans if s)

    def covered(begin: int, end: int) -> bool:
        reach = begin
        for b, e in stored:
            if b > reach:
                break
            reach = max(reach, e)
        return reach >= end

    return [(b, e) for b, e, s in spans[:-1] if not s and not covered(b, e)]


def _has_gap(spans: list[tuple[int, int, bool]]) -> bool:
    """Whether the fragments leave bytes out, from offset 0 on (nothing is ever deleted here)."""
    reach = 0
    for begin, end, _ in spans:
        if begin > reach:
            return True
        reach = max(reach, end)
    return False


def _judge(gazette: LocalCluster, ins: list[str], outs: list[str], summary: Summary, real_time: bool = False) -> None:
    broker, heads = gazette.broker, _heads(gazette, ins + outs)
    # Every message, to the end of each journal: a read that stops short (at bytes its broker has
    # not indexed) would count the output of what it missed as phantoms, or its outputs as lost.
    every = {j: judge.read(broker, j, committed=False) for j in ins + outs}
    for j, records in every.items():
        if (end := max((r["end"] for r in records), default=0)) != heads[j]:
            raise RuntimeError(f"the judge read {j} to offset {end}, short of its write head {heads[j]}")
    want = {(r["journal"], r["begin"]): r["uuid"] for j in ins for r in judge.read(broker, j)}
    deliveries = Counter(u for u in want.values() if u)
    summary.recommitted = sum(n - 1 for n in deliveries.values())
    got = Counter()
    for j in outs:
        for r in judge.read(broker, j):
            doc = json.loads(r["payload"])
            got[(doc["src"], doc["begin"])] += 1
    summary.committed, summary.written = len(want), sum(got.values())
    lost = sorted(k for k in want if k not in got)
    dups = sorted(k for k, n in got.items() if n > 1 and k in want)
    if real_time:  # without a UUID, a message is written at least once in real-time mode
        summary.repeated_without_uuid = sum(got[k] - 1 for k in dups if not want[k])
        dups = [k for k in dups if want[k]]
    phantoms = sorted(k for k in got if k not in want)
    summary.lost = len(lost)
    summary.duplicated = sum(got[k] - 1 for k in dups)
    summary.phantom = sum(got[k] for k in phantoms)
    summary.examples = (
        [f"lost {k} (uuid {want[k] or 'none'})" for k in lost[:4]]
        + [f"duplicated {k} x{got[k]} (uuid {want[k] or 'none'})" for k in dups[:4]]
        + [f"phantom {k}: {_what_is_at(every, k, want)}" for k in phantoms[:4]]
    )


def _what_is_at(every: dict[str, list[dict]], key: tuple[str, int], want: dict) -> str:
    """What the input journal holds where a phantom's source message began, as Gazette's
    ReadUncommittedIter sees it: which message, and whether a committed one shares its UUID."""
    journal, begin = key
    at = next((r for r in every.get(journal, []) if r["begin"] == begin), None)
    if at is None:
        return "no message begins there"
    copies = [k for k, u in want.items() if at["uuid"] and u == at["uuid"]]
    return f"uuid {at['uuid'] or 'none'}, flags {at['flags']}, " + (
        f"committed at {copies[0][1]} instead" if copies else "committed nowhere"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cycles", type=int, default=int(os.environ.get("CHAOS_CYCLES", 100)))
    p.add_argument("--seed", type=int, default=int(os.environ.get("CHAOS_SEED") or random.randrange(1 << 31)))
    p.add_argument("--minutes", type=float, default=0, help="start no cycle after this many minutes (0: no limit)")
    p.add_argument("--rate", type=int, default=20, help="traffic: operations a second per input journal")
    p.add_argument("--kinds", default=",".join(KINDS), help="what to kill, of " + ", ".join(KINDS))
    p.add_argument("--real-time", action="store_true", help="the query in Spark's real-time mode")
    p.add_argument("--no-rollbacks", action="store_true", help="leave rollbacks out of the traffic")
    p.add_argument("--with-rollbacks", action="store_true", help=argparse.SUPPRESS)  # the default now
    p.add_argument("--keep", action="store_true", help="keep the logs and checkpoint even when the run is OK")
    p.add_argument("--no-ledger", action="store_true", help="leave the run out of tests/chaos/ledger.md")
    args = p.parse_args()
    kinds = tuple(args.kinds.split(","))
    if not kinds or set(kinds) - set(KINDS):
        p.error(f"--kinds {args.kinds}: each must be one of {', '.join(KINDS)}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stops the processes it started, as Ctrl-C does
    summary = run(
        args.cycles,
        args.seed,
        args.rate,
        out=lambda line: print(line, flush=True),
        minutes=args.minutes,
        kinds=kinds,
        real_time=args.real_time,
        rollbacks=not args.no_rollbacks,
        keep=args.keep,
    )
    print(summary, flush=True)
    if not args.no_ledger and summary.cycles:
        ledger.append(ledger.row_of(summary, network=False))
    sys.exit(0 if summary.ok else 1)


if __name__ == "__main__":
    main()
