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
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "harness"))
sys.path.insert(0, str(HERE))

import chaos  # noqa: E402
import judge  # noqa: E402
from cluster import LocalCluster, alive, terminate  # noqa: E402
from network import DIRECTIONS, Network  # noqa: E402
from spark_standalone import SparkStandalone  # noqa: E402
from specs import journal_specs  # noqa: E402

BROKERS = 3
FAULTS = ("spark-broker", "spark-brokers", "broker-etcd", "broker-peer", "latency", "bandwidth", "reset", "blackhole")
KILLS = ("driver", "executor", "broker")
QUERY_OPTIONS = {"rpcTimeout": "10s", "retryTimeout": "40s"}
FAULT_SECONDS = (1.0, 20.0)  # each fault's length: below retryTimeout
LONG_KINDS = ("spark-broker", "spark-brokers", "blackhole")  # the faults that can outlast retryTimeout
EXIT_BOUND = 40.0 + 10.0 + 30.0  # retryTimeout, one rpcTimeout, then Spark's own failing of the query
LONG_SECONDS = EXIT_BOUND + 10.0
STALL_BOUND = 150.0  # seconds from a fault's end to the next committed batch: an rpcTimeout, a retry
# budget and batches on a loaded 2-core machine
RESTART_BOUND = chaos.PROGRESS_TIMEOUT  # the same when the query was started again (chaos.py's bound)
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
    examples: list = field(default_factory=list)
    incidents: list = field(default_factory=list)  # failures and stalls: the cycle, its fault, the error

    @property
    def ok(self) -> bool:
        return self.lost == self.duplicated == self.phantom == self.failures == self.stalls == 0 and self.committed > 0

    def __str__(self) -> str:
        per = self.seconds / max(self.cycles, 1)
        return "\n".join(
            [
                f"network chaos{' (real-time mode)' if self.real_time else ''}: seed {self.seed}, "
                f"{self.cycles} cycles in {self.seconds:.0f} s ({per:.1f} s a cycle)",
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
                f"judged by Gazette's ReadCommittedIter: {self.committed} committed input messages, "
                f"{self.written} committed output messages; committed again after a rollback: {self.recommitted}",
                f"lost {self.lost}, duplicated {self.duplicated}, phantom {self.phantom}, failed by itself "
                f"{self.failures}, stalled {self.stalls}: {'OK' if self.ok else 'FAILED'}",
                *(f"  {i}" for i in self.incidents[:20]),
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


def _pick(kind: str, rng: random.Random, long: bool = False) -> tuple[Fault, callable]:
    """The fault's description and the function that applies it to a Network."""
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
    raise ValueError(kind)


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
    parties = ["etcd", *(f"broker-{i}" for i in range(BROKERS)), "spark"]
    with (
        Network(parties, log_dir=work) as net,
        LocalCluster(brokers=BROKERS, root=os.path.join(work, "gazette"), network=net) as gazette,
        SparkStandalone(workers=2, network=net) as spark,
    ):
        try:
            for b in gazette.state.brokers:  # every dial of Spark's to a broker goes through toxiproxy
                net.proxy_into("spark", f"broker-{b.index}", b.port)
            for prefix in ("chaos/in/", "chaos/out/"):
                gazette.apply(journal_specs(prefix, [f"part-{i}" for i in range(chaos.JOURNALS)], replication=2))
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
                fault, apply = _pick(kind, rng, long)
                kill = rng.choice(KILLS) if rng.random() < kill_share and not long else None
                if kill == "broker" and fault.kind in ("broker-etcd", "broker-peer"):
                    kill = None  # a broker started again must reach etcd and its peers to serve
                kill_at, pick, delay = rng.uniform(0, fault.seconds), rng.randrange(1 << 30), rng.uniform(0, 3)
                if disrupted and (fault.disrupts_brokers or kill == "broker"):
                    # Two brokers of a route losing their spools before a persist loses data for good:
                    # more than replication 2 promises (chaos.py's _await_persisted).
                    chaos._await_persisted(gazette, ins + outs, lambda: _check_exit(query, summary, out, None))
                    disrupted = False
                _await_batch(query, summary, out, spark, work, STALL_BOUND, "the last cycle")
                batch = query.batches() - 1
                time.sleep(delay)
                at = time.monotonic()
                apply(net)
                did = ""
                if kill:
                    time.sleep(kill_at)
                    did = chaos._kill(kill, pick, query, spark, gazette, rng) or ""
                    summary.kills[kill] += bool(did)
                    summary.last_kill = (kill, at + kill_at) if did else summary.last_kill
                    disrupted |= kill == "broker" and bool(did)
                if long:
                    summary.long_faults += 1
                    did = _long_fault(query, summary, out, fault, at, spark, work)
                while time.monotonic() - at < fault.seconds:
                    _check_exit(query, summary, out, fault.text)
                    time.sleep(0.2)
                net.heal()
                net.clear_toxics()
                if long and query.exited():
                    query.start()
                for b in gazette.state.brokers:  # a broker whose lease lapsed may have exited
                    if not alive(b.pid):
                        summary.broker_exits += 1
                        out(f"  broker-{b.index} exited under the fault; starting it again")
                        gazette.start_broker(b.index)
                        disrupted = True
                disrupted |= fault.disrupts_brokers
                summary.faults[fault.kind] += 1
                summary.cycles = cycle
                bound = RESTART_BOUND if kill == "driver" else STALL_BOUND
                waited = _await_batch(query, summary, out, spark, work, bound, f"cycle {cycle}: {fault.text}")
                if waited > summary.slowest:
                    summary.slowest, summary.slowest_fault = waited, f"cycle {cycle}: {fault.text}"
                out(
                    f"cycle {cycle} at {time.monotonic() - started:.0f}s: {fault.text} for {fault.seconds:.1f}s, "
                    f"{delay:.2f}s after batch {batch} committed"
                    + (f"; {did}" if long else f"; {did} {kill_at:.1f}s into it" if did else "")
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
                summary.proxied = sum('"Accepted client"' in line for line in log)
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


def _await_batch(
    query: Query, summary: Summary, out, spark: SparkStandalone, work: str, bound: float, after: str
) -> float:
    """Seconds until the query commits one more batch. Past `bound` it counts a stall, saves the
    threads of the driver and executors, and restarts the query."""
    base, since = query.batches(), time.monotonic()
    while query.batches() <= base:
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
    if not summary.ok:
        replay = f"--seed {args.seed} --cycles {summary.cycles} --faults {args.faults} --kill-share {args.kill_share}"
        replay += f" --long-share {args.long_share}" + (" --real-time" if args.real_time else "")
        print(f"replay: python tests/chaos/network_chaos.py {replay}", flush=True)
    sys.exit(0 if summary.ok else 1)


if __name__ == "__main__":
    main()
