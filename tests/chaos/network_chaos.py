"""Network chaos: the pipeline of tests/chaos/chaos.py (gazette, read committed -> Spark ->
gazette, written exactly once; live traffic from Gazette's Go Publisher) with etcd, each of three
brokers and Spark (master, workers, executors and the query's driver) in network namespaces of
their own (tests/harness/network.py). Spark dials the brokers through toxiproxy (NAT in Spark's
namespace), so its links can be slowed, capped and reset; nftables rules drop packets between
parties. Each cycle waits until the query commits a batch, then, at a random moment, brings one
fault for a random length (FAULT_SECONDS), at times with a SIGKILL of the driver, an executor or a
broker during it (--kill-share):

    spark-broker    Spark and one broker partitioned: both ways, or one way only
    spark-brokers   Spark and every broker partitioned, likewise
    broker-etcd     a broker and etcd partitioned: past the brokers' 5 s lease its routes move
    broker-peer     a broker and one of its replication peers partitioned
    latency         50-1,000 ms (and jitter) on Spark's links to one broker or to all
    bandwidth       4-256 KiB/s each way on Spark's links to one broker or to all
    reset           Spark's connections to one broker or to all reset (RST) 0-2 s after they open,
                    mid-Read and mid-Append
    blackhole       Spark's links to one broker or to all stop carrying data (toxiproxy's timeout)
    store           the fragment store (MinIO, in a namespace of its own) faulted for Spark while a
                    batch read of the inputs' history runs (tests/chaos/history_read.py, read
                    uncommitted to the write heads, persisted fragments read straight from the
                    store): Spark and the store partitioned (one way or both), its links black-holed,
                    slowed (50-1,000 ms) or reset, or the store down for everyone (killed, started
                    again within FAULT_SECONDS). The read must give exactly the messages Gazette's
                    ReadUncommittedIter gives up to those heads, within HISTORY_BOUND, with no error

The query runs with `rpcTimeout` 10 s and `retryTimeout` 40 s (QUERY_OPTIONS; the defaults are 30 s
and 2 m), so that faults can outlast them in minutes. The stated bounds: a fault of FAULT_SECONDS
is shorter than `retryTimeout`, so the query must neither fail nor lose, duplicate or invent a
message, and once the fault heals it must commit a batch within STALL_BOUND seconds
(RESTART_BOUND when the cycle restarted the driver). A share of the partitions and blackholes
(--long-share) lasts LONG_SECONDS, past `retryTimeout` + `rpcTimeout`: then the query may fail, by
EXIT_BOUND seconds into the fault, with an error that names the journal and the retry budget
(GAZETTE_BROKER_UNAVAILABLE: "... of journal J: broker B is unreachable after retrying for 40
seconds"; a List names its selector in place of J), or fail its tasks so (where the RPC that gave
up ran in a task, Spark runs the task again, up to spark.task.maxFailures attempts), or go on
committing batches; one that does none of these, or fails with another error, is a defect. Then traffic stops, the query
drains to the write heads, and Gazette's ReadCommittedIter judges inputs against outputs, as in
chaos.py.

    python tests/chaos/network_chaos.py [--cycles N] [--seed S] [--faults a,b] [--kill-share F]
        [--long-share F] [--minutes M] [--keep]

Needs root (namespaces, nftables), nft and toxiproxy-server (`make setup`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "harness"))
sys.path.insert(0, str(HERE))

import chaos  # noqa: E402
import judge  # noqa: E402
import ledger  # noqa: E402
from cluster import LocalCluster, alive, terminate  # noqa: E402
from network import DIRECTIONS, Network  # noqa: E402
from spark_standalone import SparkStandalone  # noqa: E402
from specs import journal_specs  # noqa: E402

BROKERS = 3
FAULTS = (
    "spark-broker",
    "spark-brokers",
    "broker-etcd",
    "broker-peer",
    "latency",
    "bandwidth",
    "reset",
    "blackhole",
    "store",
)
STORE_FAULTS = ("partition", "blackhole", "latency", "reset", "down")
KILLS = ("driver", "executor", "broker")
QUERY_OPTIONS = {"rpcTimeout": "10s", "retryTimeout": "40s"}
FAULT_SECONDS = (1.0, 20.0)  # each fault's length: below retryTimeout
LONG_KINDS = ("spark-broker", "spark-brokers", "blackhole")  # the faults that can outlast retryTimeout
EXIT_BOUND = 40.0 + 10.0 + 30.0  # retryTimeout, one rpcTimeout, then Spark's own failing of the query
LONG_SECONDS = EXIT_BOUND + 10.0
STALL_BOUND = 150.0  # seconds from a fault's end to the next committed batch: an rpcTimeout, a retry
# budget and batches on a loaded 2-core machine
STORE_FRAGMENT_BYTES = 64 << 10  # fragments' length: a history read crosses many, each a read of the store
RESTART_BOUND = chaos.PROGRESS_TIMEOUT  # the same when the query was started again (chaos.py's bound)
HISTORY_FRAGMENTS = 64  # a history read's window: each input's last fragments (64 KiB each)
HISTORY_BOUND = 180.0  # seconds for a history read under a store fault: a JVM's start on a loaded 2-core machine,
# one rpcTimeout before the store is marked down, the history through the brokers
# What a failure past the retry budget must say: the condition, the budget, and the journal (a List
# names its selector, `journal selector 'prefix=chaos/in/'`).
DOCUMENTED = ("GAZETTE_BROKER_UNAVAILABLE", "after retrying for 40 seconds", "of journal", "chaos/")


@dataclass
class Summary:
    seed: int
    real_time: bool = False
    cycles: int = 0
    seconds: float = 0.0
    faults: Counter = field(default_factory=Counter)
    kills: Counter = field(default_factory=Counter)
    caused: Counter = field(default_factory=Counter)  # real-time: query exits a kill caused, by its kind
    last_kill: tuple | None = None  # (kind, monotonic time)
    repeated_without_uuid: int = 0  # real-time: extra copies of input messages without a UUID (at least once)
    broker_exits: int = 0  # brokers that exited during a fault (their etcd lease lapsed), started again
    failures: int = 0  # query exits no fault explains, or with an error that does not name journal and timeout
    stalls: int = 0  # no batch within the bound after a fault; a long fault with neither a batch nor an exit
    long_faults: int = 0
    timed_out: int = 0  # long faults that failed the query as documented (journal and retry budget named)
    tasks_failed: int = 0  # long faults that failed tasks as documented while Spark retried them
    slowest_exit: float = 0.0  # the latest such failure, seconds into its fault
    slowest: float = 0.0  # the longest wait for a batch after a fault ended (seconds)
    slowest_fault: str = ""
    committed: int = 0
    written: int = 0
    lost: int = 0
    duplicated: int = 0
    phantom: int = 0
    recommitted: int = 0
    proxied: int = 0  # connections of Spark's that toxiproxy carried (its log): the toxics had links to act on
    history_reads: int = 0  # batch reads of the history under a store fault, judged
    history_messages: int = 0  # messages those reads returned, all together
    history_slowest: float = 0.0  # the longest of them (seconds)
    store_reads: int = 0  # connections to the store that toxiproxy carried during the history reads
    history_windows: list = field(default_factory=list)  # (start, end) of each history read, Unix seconds
    examples: list = field(default_factory=list)
    incidents: list = field(default_factory=list)  # failures and stalls: the cycle, its fault, the error
    skipped: list = field(default_factory=list)  # cycles left out: the brokers' fragments not persisted in time

    @property
    def ok(self) -> bool:
        # History reads that never reached the store through toxiproxy tested nothing of it.
        store = self.history_reads == 0 or self.store_reads > 0
        return (
            self.lost == self.duplicated == self.phantom == self.failures == self.stalls == 0
            and self.committed > 0
            and store
        )

    def __str__(self) -> str:
        per = self.seconds / max(self.cycles, 1)
        return "\n".join(
            [
                f"network chaos{' (real-time mode)' if self.real_time else ''}: seed {self.seed}, "
                f"{self.cycles} cycles in {self.seconds:.0f} s ({per:.1f} s a cycle)"
                + (
                    f", {len(self.skipped)} of them left out (brokers' fragments not persisted in time)"
                    if self.skipped
                    else ""
                ),
                "faults: " + ", ".join(f"{k} {self.faults[k]}" for k in FAULTS if self.faults[k]),
                "kills during faults: "
                + (", ".join(f"{k} {self.kills[k]}" for k in KILLS) or "none")
                + f"; brokers that exited under a fault and were started again: {self.broker_exits}"
                + (
                    "; query exits the kills caused: " + ", ".join(f"{k} {self.caused[k]}" for k in KILLS)
                    if self.real_time
                    else ""
                ),
                f"Spark's connections to brokers through toxiproxy: {self.proxied}; "
                f"slowest batch after a fault ended: {self.slowest:.0f} s ({self.slowest_fault or 'none'}); "
                f"bound {STALL_BOUND:.0f} s, {RESTART_BOUND:.0f} s after a driver restart",
                f"faults past retryTimeout: {self.long_faults}, failing the query as documented {self.timed_out} "
                f"times and its tasks {self.tasks_failed} times (Spark retrying them, spark.task.maxFailures; "
                f"latest {self.slowest_exit:.0f} s into its fault, bound {EXIT_BOUND:.0f} s), "
                f"the query went on committing batches through the others",
                f"history read under store faults {self.history_reads} times ({self.history_messages} messages, "
                f"judged by Gazette's ReadUncommittedIter; slowest {self.history_slowest:.0f} s, bound "
                f"{HISTORY_BOUND:.0f} s; connections to the store through toxiproxy during them: {self.store_reads})",
                f"judged by Gazette's ReadCommittedIter: {self.committed} committed input messages, "
                f"{self.written} committed output messages; committed again after a rollback: {self.recommitted}",
                f"lost {self.lost}, duplicated {self.duplicated}, phantom {self.phantom}, failed by itself "
                f"{self.failures}, stalled {self.stalls}: {'OK' if self.ok else 'FAILED'}",
                *(f"  {i}" for i in self.incidents[:20]),
                *(f"  left out: {s}" for s in self.skipped[:5]),
                *(f"  e.g. {e}" for e in self.examples[:10]),
            ]
        )


class Query(chaos.Query):
    """chaos.py's query process, inside Spark's namespace."""

    def __init__(self, network: Network, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.args = network.prefix("spark") + self.args + ["--options", json.dumps(QUERY_OPTIONS)]


@dataclass
class Fault:
    kind: str
    seconds: float
    text: str
    disrupts_brokers: bool = False  # a broker may lose its journals (kill, lease lapsed)
    store: str = ""  # of STORE_FAULTS, for a fault of the store


def _pick(
    kind: str, rng: random.Random, long: bool = False, gazette: LocalCluster | None = None
) -> tuple[Fault, callable]:
    """The fault's description and the function that applies it to a Network (a store down
    stops `gazette`'s S3 server)."""
    seconds = rng.uniform(*FAULT_SECONDS)
    b, direction, one = rng.randrange(BROKERS), rng.choice(DIRECTIONS), rng.random() < 0.5
    if long:
        seconds, direction = LONG_SECONDS, "both"
    targets = [f"broker-{b}"] if one else [f"broker-{i}" for i in range(BROKERS)]
    where = f"broker-{b}" if one else "every broker"
    arrow = {"both": "<->", "to": "->", "from": "<-"}[direction]
    if kind == "spark-broker":
        return Fault(kind, seconds, f"spark {arrow} broker-{b} partitioned"), lambda n: n.partition(
            "spark", f"broker-{b}", direction
        )
    if kind == "spark-brokers":

        def apply(n: Network) -> None:
            for i in range(BROKERS):
                n.partition("spark", f"broker-{i}", direction)

        return Fault(kind, seconds, f"spark {arrow} every broker partitioned"), apply
    if kind == "broker-etcd":
        return (
            Fault(kind, seconds, f"broker-{b} {arrow} etcd partitioned", disrupts_brokers=seconds > 5),
            lambda n: n.partition(f"broker-{b}", "etcd", direction),
        )
    if kind == "broker-peer":
        c = rng.choice([i for i in range(BROKERS) if i != b])
        return Fault(kind, seconds, f"broker-{b} {arrow} broker-{c} partitioned"), lambda n: n.partition(
            f"broker-{b}", f"broker-{c}", direction
        )
    if kind == "latency":
        ms, jitter = rng.randrange(50, 1001), rng.randrange(0, 100)
        return Fault(kind, seconds, f"latency {ms}±{jitter} ms to {where}"), lambda n: [
            n.toxic(t, "latency", stream=s, latency=ms, jitter=jitter) for t in targets for s in ("downstream",)
        ]
    if kind == "bandwidth":
        rate = rng.randrange(4, 257)
        return Fault(kind, seconds, f"bandwidth {rate} KiB/s each way to {where}"), lambda n: [
            n.toxic(t, "bandwidth", stream=s, rate=rate) for t in targets for s in ("downstream", "upstream")
        ]
    if kind == "reset":
        ms = rng.randrange(0, 2001)
        seconds = min(seconds, 10.0)
        return Fault(kind, seconds, f"connections to {where} reset {ms} ms after they open"), lambda n: [
            n.toxic(t, "reset_peer", timeout=ms) for t in targets
        ]
    if kind == "blackhole":
        return Fault(kind, seconds, f"links to {where} carry no data"), lambda n: [
            n.toxic(t, "timeout", stream=s, timeout=0) for t in targets for s in ("downstream", "upstream")
        ]
    if kind == "store":
        return _pick_store(rng, seconds, direction, arrow, gazette)
    raise ValueError(kind)


def _pick_store(rng: random.Random, seconds: float, direction: str, arrow: str, gazette) -> tuple[Fault, callable]:
    """A fault of the fragment store as Spark sees it (all but `down`, which is everyone's)."""
    variant = rng.choice(STORE_FAULTS)
    if variant == "partition":
        return Fault("store", seconds, f"spark {arrow} store partitioned", store=variant), lambda n: n.partition(
            "spark", "s3", direction
        )
    if variant == "blackhole":
        return Fault("store", seconds, "links to the store carry no data", store=variant), lambda n: [
            n.toxic("s3", "timeout", stream=s, timeout=0) for s in ("downstream", "upstream")
        ]
    if variant == "latency":
        ms, jitter = rng.randrange(50, 1001), rng.randrange(0, 100)
        return Fault("store", seconds, f"latency {ms}±{jitter} ms to the store", store=variant), lambda n: n.toxic(
            "s3", "latency", latency=ms, jitter=jitter
        )
    if variant == "reset":
        ms = rng.randrange(0, 2001)
        return Fault("store", seconds, f"connections to the store reset {ms} ms after they open", store=variant), (
            lambda n: n.toxic("s3", "reset_peer", timeout=ms)
        )
    return Fault("store", seconds, "the store down for everyone", store=variant), lambda _: gazette.stop_store()


def run(
    cycles: int,
    seed: int,
    out=print,
    minutes: float = 0,
    faults=FAULTS,
    kill_share: float = 0.25,
    long_share: float = 0.1,
    rate: int = 20,
    keep: bool = False,
    real_time: bool = False,
) -> Summary:
    rng, summary, started = random.Random(seed), Summary(seed, real_time=real_time), time.monotonic()
    work = tempfile.mkdtemp(prefix="chaos-network-")
    out(f"network chaos: seed {seed}, {cycles} cycles, faults {', '.join(faults)}, work in {work}")
    ins = [f"chaos/in/part-{i}" for i in range(chaos.JOURNALS)]
    outs = [f"chaos/out/part-{i}" for i in range(chaos.JOURNALS)]
    traffic = query = None
    # The store faults need a store of their own: MinIO, in a namespace, reached through toxiproxy.
    with_store = "store" in faults
    parties = ["etcd", *(f"broker-{i}" for i in range(BROKERS)), *(["s3"] if with_store else []), "spark"]
    store = "s3" if with_store else "file"
    with (
        Network(parties, log_dir=work) as net,
        LocalCluster(brokers=BROKERS, root=os.path.join(work, "gazette"), network=net, store=store) as gazette,
        SparkStandalone(workers=2, network=net) as spark,
    ):
        try:
            for b in gazette.state.brokers:  # every dial of Spark's to a broker goes through toxiproxy
                net.proxy_into("spark", f"broker-{b.index}", b.port)
            if with_store:  # and to the store, at the URLs brokers sign
                net.proxy_into("spark", "s3", gazette.state.s3_port)
            for prefix in ("chaos/in/", "chaos/out/"):
                children = [f"part-{i}" for i in range(chaos.JOURNALS)]
                # Small fragments, persisted every minute: a history read finds most of them in the store.
                stored = {"store": gazette.store_url(prefix), "length": STORE_FRAGMENT_BYTES, "flush_interval": "1m0s"}
                gazette.apply(journal_specs(prefix, children, replication=2, **(stored if with_store else {})))
            brokers = ",".join(b.endpoint for b in gazette.state.brokers)
            with open(os.path.join(work, "traffic.log"), "ab") as log:
                traffic = subprocess.Popen(
                    [str(judge.BINARY), "traffic", "--broker", brokers.split(",")[0], "--journals", ",".join(ins)]
                    + ["--random", str(seed), "--rate", str(rate)],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            query = Query(
                net, spark.master, brokers, os.path.join(work, "checkpoint"), os.path.join(work, "query.log"), real_time
            )
            query.start()
            _await_batch(query, summary, out, spark, work, RESTART_BOUND, "the query's start")
            schedule: list[str] = []
            disrupted = False  # a broker lost its journals since every fragment was last persisted
            for cycle in range(1, cycles + 1):
                if minutes and time.monotonic() - started > minutes * 60:
                    out(f"stopping after {cycle - 1} cycles: --minutes {minutes:g} are up")
                    break
                schedule = schedule or rng.sample(faults, len(faults))
                kind = schedule.pop()
                long = kind in LONG_KINDS and rng.random() < long_share
                fault, apply = _pick(kind, rng, long, gazette)
                kill = rng.choice(KILLS) if rng.random() < kill_share and not long else None
                if fault.store:
                    kill = None  # the history read is what a store fault is about
                if kill == "broker" and fault.kind in ("broker-etcd", "broker-peer"):
                    kill = None  # a broker started again must reach etcd and its peers to serve
                kill_at, pick, delay = rng.uniform(0, fault.seconds), rng.randrange(1 << 30), rng.uniform(0, 3)
                if disrupted and (fault.disrupts_brokers or kill == "broker"):
                    # Two brokers of a route losing their spools before a persist loses data for good:
                    # more than replication 2 promises (chaos.py's _await_persisted).
                    unpersisted = chaos._await_persisted(
                        gazette, ins + outs, lambda: _check_exit(query, summary, out, None), fail=False
                    )
                    if unpersisted:
                        # Not the pipeline's doing (brokers persist, to a store no fault touches now): the
                        # cycle is left out rather than the run ended, and the tally says so.
                        summary.skipped.append(f"cycle {cycle}: fragments not persisted after 600s: {unpersisted}")
                        out(f"cycle {cycle} skipped: fragments not persisted after 600s: {unpersisted}")
                        continue
                    disrupted = False
                exits = summary.broker_exits
                _await_batch(query, summary, out, spark, work, STALL_BOUND, "the last cycle", gazette)
                disrupted |= summary.broker_exits > exits
                batch = query.batches() - 1
                time.sleep(delay)
                at = time.monotonic()
                if not fault.store:  # a store fault is brought once its history read has started
                    apply(net)
                did = ""
                if kill:
                    time.sleep(kill_at)
                    # A broker started again is waited for once the fault ends: the fault must not last
                    # longer than drawn while it joins (it did, by a minute, and past retryTimeout).
                    did = chaos._kill(kill, pick, query, spark, gazette, rng, wait=False) or ""
                    summary.kills[kill] += bool(did)
                    summary.last_kill = (kill, at + kill_at) if did else summary.last_kill
                    disrupted |= kill == "broker" and bool(did)
                if long:
                    summary.long_faults += 1
                    did = _long_fault(query, summary, out, fault, at, spark, work)
                if fault.store:
                    did, at = _history_read(query, summary, out, fault, apply, gazette, net, ins, brokers, work)
                    fault.seconds = time.monotonic() - at
                while time.monotonic() - at < fault.seconds:
                    _check_exit(query, summary, out, fault.text)
                    time.sleep(0.2)
                net.heal()
                net.clear_toxics()
                lasted = time.monotonic() - at
                if kill == "broker" and did:
                    gazette.wait_writable(timeout=120)
                if long and query.exited():
                    query.start()
                disrupted |= _revive_brokers(gazette, summary, out)
                disrupted |= fault.disrupts_brokers
                summary.faults[fault.kind] += 1
                summary.cycles = cycle
                bound = RESTART_BOUND if kill == "driver" else STALL_BOUND
                exits = summary.broker_exits
                waited = _await_batch(query, summary, out, spark, work, bound, f"cycle {cycle}: {fault.text}", gazette)
                disrupted |= summary.broker_exits > exits
                if waited > summary.slowest:
                    summary.slowest, summary.slowest_fault = waited, f"cycle {cycle}: {fault.text}"
                out(
                    f"cycle {cycle} at {time.monotonic() - started:.0f}s: {fault.text} for {lasted:.1f}s, "
                    f"{delay:.2f}s after batch {batch} committed"
                    + (f"; {did}" if long or fault.store else f"; {did} {kill_at:.1f}s into it" if did else "")
                    + f"; a batch {waited:.0f}s after it ended"
                )
            out("stopping traffic")
            traffic.send_signal(signal.SIGTERM)
            if traffic.wait(timeout=180) != 0:
                raise RuntimeError(f"judge traffic failed; see {work}/traffic.log")
            _check_exit(query, summary, out, "the last cycle", restart=False)
            query.kill()
            chaos._await_whole(gazette, ins, out)
            summary.failures += chaos._drain(query, out, heads=chaos._heads(gazette, ins) if real_time else None)
            chaos._await_whole(gazette, outs, out)
            chaos._judge(gazette, ins, outs, summary, real_time)
            with open(os.path.join(work, f"toxiproxy-{net.tag}.log"), errors="replace") as log:
                accepted = [line for line in log if '"Accepted client"' in line]
            if with_store:
                summary.store_reads = _store_reads(accepted, net.proxies["s3"], summary.history_windows)
            summary.proxied = sum(f'"{net.proxies.get("s3")}"' not in line for line in accepted)
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


def _history_read(
    query: Query, summary: Summary, out, fault: Fault, apply, gazette: LocalCluster, net: Network, ins, brokers, work
) -> tuple[str, float]:
    """Runs a batch read of the inputs' recent history (history_read.py: the last HISTORY_FRAGMENTS
    fragments of each, read uncommitted to the write heads) and brings the store fault (`apply`)
    once its JVM is up, so that the fault meets the read; judges the read against Gazette's
    ReadUncommittedIter over the same offsets: lost, duplicated and phantom messages count as the
    pipeline's do; an error, or no end within HISTORY_BOUND, is a failure or a stall. A store that
    is down is started again FAULT_SECONDS into the fault. Returns what happened and when the fault
    began."""
    chaos._await_whole(gazette, ins, out)  # readers stop at a gap a broker's SIGKILL left, for minutes
    heads = chaos._heads(gazette, ins)
    if any(h == float("inf") for h in heads.values()):
        return "no history read: a journal's primary takes no append", time.monotonic()
    starts = {j: _window_start(gazette, j, heads[j]) for j in ins}
    n = summary.history_reads + 1
    rows, log_path = os.path.join(work, f"history-{n}.rows"), os.path.join(work, f"history-{n}.log")
    args = [sys.executable, str(HERE / "history_read.py"), brokers, query.jar, rows]
    args += ["--starts", json.dumps(starts), "--ends", json.dumps({j: int(h) for j, h in heads.items()})]
    args += ["--options", json.dumps(QUERY_OPTIONS)]
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            net.prefix("spark") + args,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    at = time.monotonic()
    try:
        while proc.poll() is None and not _logged(log_path, "ready") and time.monotonic() - at < HISTORY_BOUND:
            time.sleep(0.2)
        at = time.monotonic()
        apply(net)
        while proc.poll() is None and time.monotonic() - at < HISTORY_BOUND:
            _check_exit(query, summary, out, fault.text)
            if fault.store == "down" and time.monotonic() - at >= fault.seconds and not alive(gazette.state.s3_pid):
                gazette.start_store()
            time.sleep(0.2)
    finally:
        if fault.store == "down":
            gazette.start_store()
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the read's Python and its JVM
            except ProcessLookupError:
                pass
            proc.wait()
    took = time.monotonic() - at
    summary.history_reads += 1
    summary.history_slowest = max(summary.history_slowest, took)
    summary.history_windows.append((time.time() - took, time.time()))
    if took >= HISTORY_BOUND:
        summary.stalls += 1
        summary.incidents.append(f"{fault.text}: the history read did not end in {HISTORY_BOUND:.0f}s; see {log_path}")
        return f"the history read did not end in {HISTORY_BOUND:.0f}s", at
    if proc.returncode != 0:
        with open(log_path, errors="replace") as log:
            errors = [line.strip() for line in log if "GAZETTE_" in line or "Error" in line]
        error = errors[-1][:300] if errors else f"exit {proc.returncode}"
        summary.failures += 1
        summary.incidents.append(f"{fault.text}: the history read failed: {error}")
        return f"the history read failed: {error[:200]}", at
    got = Counter()
    with open(rows) as f:
        for line in f:
            journal, begin = line.split()
            got[(journal, int(begin))] += 1
    want = set()
    for j, h in heads.items():
        records = judge.read(gazette.broker, j, committed=False)
        if max((r["end"] for r in records), default=0) < h:
            raise RuntimeError(f"the judge read {j} short of offset {h}, the history read's end")
        want |= {(j, r["begin"]) for r in records if r["begin"] >= starts[j] and r["end"] <= h}
    lost, phantom = sorted(want - got.keys()), sorted(got.keys() - want)
    dups = sorted(k for k, c in got.items() if c > 1)
    summary.lost += len(lost)
    summary.duplicated += sum(got[k] - 1 for k in dups)
    summary.phantom += sum(got[k] for k in phantom)
    summary.history_messages += sum(got.values())
    summary.examples += (
        [f"history read {n}: lost {k}" for k in lost[:3]]
        + [f"history read {n}: duplicated {k} x{got[k]}" for k in dups[:3]]
        + [f"history read {n}: phantom {k}" for k in phantom[:3]]
    )
    wrong = f", lost {len(lost)}, duplicated {len(dups)}, phantom {len(phantom)}" if lost or dups or phantom else ""
    return f"the history read {sum(got.values())} messages in {took:.0f}s{wrong}", at


def _window_start(gazette: LocalCluster, journal: str, head: float) -> int:
    """Where a history read of `journal` begins: the first of its last HISTORY_FRAGMENTS fragments
    before `head` (a fragment begins at a message), so that reads stay the same size as it grows."""
    begins = sorted({b for b, e, _ in chaos._fragments(gazette, f"name={journal}").get(journal, []) if e <= head})
    return begins[-HISTORY_FRAGMENTS] if len(begins) >= HISTORY_FRAGMENTS else 0


def _logged(path: str, word: str) -> bool:
    with open(path, errors="replace") as f:
        return any(line.strip() == word for line in f)


def _store_reads(log: list[str], proxy: str, windows: list[tuple[float, float]]) -> int:
    """Connections toxiproxy accepted into the store's proxy during the history reads."""
    n = 0
    for line in log:
        if f'"{proxy}"' in line:
            t = datetime.fromisoformat(json.loads(line)["time"].replace("Z", "+00:00")).timestamp()
            n += any(a <= t <= b for a, b in windows)
    return n


def _long_fault(query: Query, summary: Summary, out, fault: Fault, at: float, spark: SparkStandalone, work: str) -> str:
    """Watches the query through a fault past its timeouts: it fails as documented, by EXIT_BOUND,
    or goes on committing batches; otherwise a defect. Leaves it stopped or running."""
    base, logged, failed_tasks = query.batches(), os.path.getsize(query.log), None
    while time.monotonic() - at < fault.seconds and not query.exited():
        time.sleep(0.2)
        if failed_tasks is None and _documented_task_failure(query, logged):
            failed_tasks = time.monotonic() - at
    if not query.exited():
        if query.batches() > base:
            return "the query went on committing batches"
        # A task's RPC that gives up fails the task, not the query: Spark runs it again, each attempt
        # with a budget of its own, until spark.task.maxFailures attempts have failed.
        if failed_tasks is not None and failed_tasks <= EXIT_BOUND:
            summary.tasks_failed += 1
            summary.slowest_exit = max(summary.slowest_exit, failed_tasks)
            return f"its tasks failed {failed_tasks:.0f}s into it as documented, and Spark ran them again"
        summary.stalls += 1
        dump = chaos._dump_threads(query, spark, os.path.join(work, f"stall-{summary.stalls}"))
        summary.incidents.append(
            f"{fault.text} for {fault.seconds:.0f}s: no batch, no failure (silent stall); threads in {dump}"
        )
        return f"the query neither failed nor committed a batch (silent stall); threads saved in {dump}"
    after, error = time.monotonic() - at, _error(query)
    time.sleep(max(0.0, fault.seconds - after))  # down until the fault ends: the caller starts it again
    if all(d in error for d in DOCUMENTED) and after <= EXIT_BOUND:
        summary.timed_out += 1
        summary.slowest_exit = max(summary.slowest_exit, after)
        return f"the query failed {after:.0f}s into it as documented, started again after it"
    summary.failures += 1
    summary.incidents.append(f"{fault.text}: the query failed {after:.0f}s into it with: {error[:300]}")
    return f"the query failed {after:.0f}s into it, not as documented: {error[:200]}"


def _documented_task_failure(query: Query, since: int) -> bool:
    """Whether Spark logged a task failing with the documented error after byte `since` of the log."""
    with open(query.log, errors="replace") as log:
        log.seek(since)
        return any("Lost task" in line and all(d in line for d in DOCUMENTED) for line in log)


def _error(query: Query) -> str:
    """The query's last GAZETTE_ error line, or else its last error line."""
    with open(query.log, errors="replace") as log:
        lines = [line.strip() for line in log]
    ours = [line for line in lines if "GAZETTE_" in line]
    return ours[-1] if ours else query.last_error()


def _check_exit(query: Query, summary: Summary, out, during: str | None, restart: bool = True) -> bool:
    """Whether the query had exited: a failure, no fault here outlasting the connector's timeouts,
    except in real-time mode within chaos.CAUSE_WINDOW of a kill (of an executor, at times of a
    broker or the driver: Spark retries no task there) with an error not about the data. Restarts it."""
    if not query.exited():
        return False
    why = f"code {query.proc.returncode}: {query.last_error()}"
    kill = summary.last_kill
    if (
        summary.real_time
        and kill
        and query.started <= kill[1]
        and time.monotonic() - kill[1] <= chaos.CAUSE_WINDOW
        and not any(e in why for e in chaos.DATA_ERRORS)
    ):
        summary.caused[kill[0]] += 1
        out(f"  the query failed after the {kill[0]} kill ({why}); restarting it")
        if restart:
            query.start()
        return True
    summary.failures += 1
    summary.incidents.append(f"failed during {during or 'a wait'}: {why}")
    out(f"  the query exited by itself during {during or 'a wait'} ({why}); restarting it")
    if restart:
        query.start()
    return True


def _revive_brokers(gazette: LocalCluster, summary: Summary, out) -> bool:
    """Starts again each broker that exited (one whose etcd lease lapsed exits by itself, up to
    seconds after its partition healed); whether any did."""
    revived = False
    for b in gazette.state.brokers:
        if not alive(b.pid):
            summary.broker_exits += 1
            out(f"  broker-{b.index} exited under the fault; starting it again")
            gazette.start_broker(b.index)
            revived = True
    return revived


def _await_batch(
    query: Query, summary: Summary, out, spark: SparkStandalone, work: str, bound: float, after: str, gazette=None
) -> float:
    """Seconds until the query commits one more batch, starting again brokers that exited meanwhile
    (with `gazette`). Past `bound` it counts a stall, saves the threads of the driver and executors,
    and restarts the query."""
    base, since = query.batches(), time.monotonic()
    while query.batches() <= base:
        if gazette is not None:
            _revive_brokers(gazette, summary, out)
        if _check_exit(query, summary, out, after):
            since = time.monotonic()
            bound = RESTART_BOUND
        elif time.monotonic() - since > bound:
            summary.stalls += 1
            dump = chaos._dump_threads(query, spark, os.path.join(work, f"stall-{summary.stalls}"))
            summary.incidents.append(f"stalled after {after}: no batch in {bound:.0f}s; threads in {dump}")
            out(f"  no batch committed {bound:.0f}s after {after}; threads saved in {dump}; restarting the query")
            query.kill()
            query.start()
            since, bound = time.monotonic(), RESTART_BOUND
        time.sleep(0.2)
    return time.monotonic() - since


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cycles", type=int, default=int(os.environ.get("CHAOS_CYCLES", 200)))
    p.add_argument("--seed", type=int, default=int(os.environ.get("CHAOS_SEED") or random.randrange(1 << 31)))
    p.add_argument("--minutes", type=float, default=0, help="start no cycle after this many minutes (0: no limit)")
    p.add_argument("--faults", default=",".join(FAULTS), help="of " + ", ".join(FAULTS))
    p.add_argument("--kill-share", type=float, default=0.25, help="share of faults with a kill during them")
    p.add_argument("--long-share", type=float, default=0.1, help="share of partitions and blackholes past retryTimeout")
    p.add_argument("--rate", type=int, default=20, help="traffic: operations a second per input journal")
    p.add_argument("--keep", action="store_true", help="keep the logs and checkpoint even when the run is OK")
    p.add_argument("--real-time", action="store_true", help="the query in Spark's real-time mode")
    p.add_argument("--no-ledger", action="store_true", help="leave the run out of tests/chaos/ledger.md")
    args = p.parse_args()
    faults = tuple(args.faults.split(","))
    if not faults or set(faults) - set(FAULTS):
        p.error(f"--faults {args.faults}: each must be one of {', '.join(FAULTS)}")
    if os.geteuid() != 0:
        p.error("network namespaces and nftables need root")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    summary = run(
        args.cycles,
        args.seed,
        out=lambda line: print(line, flush=True),
        minutes=args.minutes,
        faults=faults,
        kill_share=args.kill_share,
        long_share=args.long_share,
        rate=args.rate,
        keep=args.keep,
        real_time=args.real_time,
    )
    print(summary, flush=True)
    if not args.no_ledger and summary.cycles:
        ledger.append(ledger.row_of(summary, network=True))
    if not summary.ok:
        replay = f"--seed {args.seed} --cycles {summary.cycles} --faults {args.faults} --kill-share {args.kill_share}"
        replay += f" --long-share {args.long_share}" + (" --real-time" if args.real_time else "")
        print(f"replay: python tests/chaos/network_chaos.py {replay}", flush=True)
    sys.exit(0 if summary.ok else 1)


if __name__ == "__main__":
    main()
