"""A pipeline that outlives its tokens: gazette (read committed) -> Spark -> gazette (exactly once),
on a standalone cluster and three brokers (one without a key rotation) that check bearer tokens
(`--broker.auth-keys`), fed by Gazette's Go Publisher. The query's tokens expire every `ttl`
seconds and are renewed under it, by a thread rewriting the token file (`authTokenFile`) or by a
provider class that mints them (`authTokenProvider`); midway the brokers' key rotates (restarted
one by one with the old and new keys, tokens minted with the new one, then restarted with the new
key alone). Then a large batch write and read on tokens living 8 s. Traffic stops, the query
drains, and Gazette's ReadCommittedIter judges: every committed input message exactly once in the
output, every batch row once; and no token given to the query may show in its logs or plans.

    python tests/tokens/tokens.py [--minutes 5] [--ttl 30] [--real-time] [--provider] [--rows 300000]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "harness"))
sys.path.insert(0, str(HERE.parent / "chaos"))
import chaos  # noqa: E402
import judge  # noqa: E402
from cluster import LocalCluster, terminate  # noqa: E402
from jars import assembly_jar  # noqa: E402
from security import Security  # noqa: E402
from spark_standalone import SparkStandalone  # noqa: E402
from specs import journal_specs  # noqa: E402

PROVIDER = "io.sparkgazette.testing.MintingTokenProvider"
BATCH_TTL = 8  # seconds the batch write's and read's tokens live (brokers allow 5 s past exp)


@dataclass
class Summary:
    mode: str
    minutes: float
    ttl: int
    seconds: float = 0.0
    tokens: int = 0  # tokens written to the file, or minted by the provider (in every JVM)
    refused_asks: int = 0  # provider: asked again after a broker refused its token
    refusals: int = 0  # refused tokens the connector logged, in the driver's and executors' logs
    rotations: int = 0  # keys the brokers rotated to
    restarts: int = 0  # broker restarts of the rotations
    stream: chaos.Summary = field(default_factory=lambda: chaos.Summary(0))
    batch_rows: int = 0
    batch_ttl: int = 0
    batch_seconds: tuple[float, float] = (0.0, 0.0)  # the write's, the read's
    batch_written: int = 0
    batch_read: int = 0
    batch_lost: int = 0
    batch_duplicated: int = 0
    shown: list[str] = field(default_factory=list)  # files of logs, plans and checkpoints holding a token

    @property
    def ok(self) -> bool:
        s = self.stream
        return (
            s.lost == s.duplicated == s.phantom == s.failures == 0
            and s.committed > 0
            and self.batch_written == self.batch_read == self.batch_rows
            and self.batch_lost == self.batch_duplicated == 0
            and not self.shown
        )

    def __str__(self) -> str:
        s = self.stream
        return "\n".join(
            [
                f"tokens ({self.mode}): {self.seconds:.0f} s, tokens living {self.ttl} s: {self.tokens} tokens "
                + ("minted by the provider" if "provider" in self.mode else "written to the token file")
                + (f" ({self.refused_asks} after a refusal)" if "provider" in self.mode else "")
                + f"; {self.refusals} refusals logged"
                + f"; {self.rotations} key rotations ({self.restarts} broker restarts)",
                f"stream judged by Gazette's ReadCommittedIter: {s.committed} committed input messages, "
                f"{s.written} output messages; lost {s.lost}, duplicated {s.duplicated}, phantom {s.phantom}, "
                f"query failures {s.failures}",
                f"batch on tokens living {self.batch_ttl} s: {self.batch_rows} rows written {self.batch_written} "
                f"in {self.batch_seconds[0]:.0f} s, read back {self.batch_read} in {self.batch_seconds[1]:.0f} s, "
                f"judged lost {self.batch_lost}, duplicated {self.batch_duplicated}",
                f"tokens shown in logs, plans, progress or checkpoints: {len(self.shown)} files "
                + ", ".join(self.shown[:4]),
                "OK" if self.ok else "FAILED",
                *(f"  e.g. {e}" for e in s.examples[:8]),
            ]
        )


class Tokens:
    """Keeps the query's tokens coming: rewrites the token file every ttl/3 s with a token minted with
    the key of the moment, or (provider) keeps the key the provider mints with in a file it reads."""

    def __init__(self, security: Security, work: str, ttl: int, provider: bool):
        self.security, self.ttl, self.provider = security, ttl, provider
        self.key = security.auth_key
        self.token_file = os.path.join(work, "token")
        self.mint_key_file = os.path.join(work, "mint.key")
        self.calls_file = os.path.join(work, "provider-calls")
        self.written = 0
        self.signatures: set[str] = set()  # of the tokens written
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._publish()

    def options(self) -> dict:
        if self.provider:
            return {
                "authTokenProvider": PROVIDER,
                "authTokenProvider.keyFile": self.mint_key_file,
                "authTokenProvider.ttlSeconds": str(self.ttl),
                "authTokenProvider.callsFile": self.calls_file,
            }
        return {"authTokenFile": self.token_file}

    def mint_with(self, key: str) -> None:
        self.key = key
        self._publish()

    def _publish(self) -> None:
        if self.provider:
            _write(self.mint_key_file, self.key)
        else:
            token = self.security.token(ttl=self.ttl, key=self.key)
            _write(self.token_file, token)
            self.written += 1
            self.signatures.add(token.rsplit(".", 1)[1])

    def _loop(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            self._publish()

    def provider_calls(self) -> tuple[int, int]:
        lines = Path(self.calls_file).read_text().splitlines() if os.path.exists(self.calls_file) else []
        return len(lines), sum(1 for line in lines if line.startswith("refused"))

    def given(self) -> set[str]:
        """The signatures of every token the query was given: no two tokens share one."""
        if not self.provider:
            return set(self.signatures)
        lines = Path(self.calls_file).read_text().splitlines() if os.path.exists(self.calls_file) else []
        return {line.split()[1] for line in lines if len(line.split()) == 2}

    def secrets(self) -> set[str]:
        """The files that hold tokens or keys by design: the rest must show none."""
        return {
            self.token_file,
            self.token_file + ".tmp",
            self.mint_key_file,
            self.mint_key_file + ".tmp",
            self.calls_file,
        }

    def __enter__(self) -> Tokens:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _write(path: str, text: str) -> None:
    tmp = path + ".tmp"
    Path(tmp).write_text(text + "\n")
    os.replace(tmp, path)  # whole, as a control plane renews a token file


def provider_jar(work: str) -> str:
    """The test's provider, compiled against the connector's jar as an application's would be."""
    classes = os.path.join(work, "provider-classes")
    os.makedirs(classes, exist_ok=True)
    subprocess.run(
        ["javac", "--release", "11", "-cp", assembly_jar(), "-d", classes, str(HERE / "MintingTokenProvider.java")],
        check=True,
        capture_output=True,
    )
    jar = os.path.join(work, "provider.jar")
    subprocess.run(["jar", "cf", jar, "-C", classes, "."], check=True, capture_output=True)
    return jar


def rotate(
    gazette: LocalCluster,
    security: Security,
    tokens: Tokens,
    summary: Summary,
    out,
    wait_old: float,
    journals: list[str],
    tick,
) -> None:
    """The brokers' key rotates, a broker at a time, as Gazette's brokers take it: each restarted with
    the old and new keys (signing what they send each other with the old one, which every broker
    still accepts), tokens minted with the new one; each restarted signing with the new one; and once
    no token of the old key can be alive, each restarted with the new key alone."""
    new = security.rotate_key()
    _restart_each(gazette, summary, journals, tick)
    tokens.mint_with(new)
    out("  brokers accept the old and the new key; tokens minted with the new one")
    security.sign_with(new)
    _restart_each(gazette, summary, journals, tick)
    time.sleep(wait_old)  # the tokens of the old key expire
    security.retire_keys(new)
    _restart_each(gazette, summary, journals, tick)
    summary.rotations += 1
    out("  brokers hold the new key alone")


def _restart_each(gazette: LocalCluster, summary: Summary, journals: list[str], tick) -> None:
    """Each broker restarted in turn, once what the brokers hold is persisted: a broker restarted at
    once may take its journals back as primary with a new spool, leaving the fragment it was writing
    on its peer alone, and restarting that peer next would lose the fragment for good (a gap no
    store holds, which replication 2 does not promise to survive)."""
    for b in gazette.state.brokers:
        chaos._await_persisted(gazette, journals, tick)
        gazette.stop_broker(b.index)
        gazette.start_broker(b.index)
        summary.restarts += 1


def run(
    minutes: float = 5,
    ttl: int = 30,
    real_time: bool = False,
    provider: bool = False,
    rows: int = 300_000,
    rotate_key: bool = True,
    out=print,
) -> Summary:
    mode = ("real-time" if real_time else "micro-batch") + (", provider" if provider else ", token file")
    summary, started = Summary(mode, minutes, ttl), time.monotonic()
    work = tempfile.mkdtemp(prefix="tokens-")
    out(f"tokens ({mode}): {minutes:g} minutes, tokens living {ttl} s, work in {work}")
    security = Security.generate(os.path.join(work, "credentials"), tls=False)
    os.environ["GAZETTE_AUTH_KEY_FILE"] = security.key_file  # the judge signs its own tokens
    ins = [f"chaos/in/part-{i}" for i in range(chaos.JOURNALS)]
    outs = [f"chaos/out/part-{i}" for i in range(chaos.JOURNALS)]
    batch = [f"chaos/batch/part-{i}" for i in range(2)]
    traffic = query = None
    # A restart of the rotation leaves each journal a broker when it has two; without a rotation one
    # broker will do, and starts sooner.
    broker_count = 3 if rotate_key else 1
    with (
        LocalCluster(brokers=broker_count, root=os.path.join(work, "gazette"), security=security) as gazette,
        SparkStandalone(workers=1, cores=2) as spark,
        Tokens(security, work, ttl, provider) as tokens,
    ):
        try:
            for prefix, names in (("chaos/in/", ins), ("chaos/out/", outs), ("chaos/batch/", batch)):
                gazette.apply(
                    journal_specs(prefix, [n.rsplit("/", 1)[1] for n in names], replication=min(broker_count, 2))
                )
            brokers = ",".join(b.endpoint for b in gazette.state.brokers)
            options = tokens.options()
            extra = provider_jar(work) if provider else None
            with open(os.path.join(work, "traffic.log"), "ab") as log:
                traffic = subprocess.Popen(
                    [str(judge.BINARY), "traffic", "--broker", gazette.broker, "--journals", ",".join(ins)]
                    + ["--random", "1", "--rate", "20"],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            query = chaos.Query(
                spark.master, brokers, os.path.join(work, "checkpoint"), os.path.join(work, "query.log"), real_time
            )
            query.args += ["--options", json.dumps({**options, "retryTimeout": "60s"})]
            if extra:
                query.args[5] = f"{query.args[5]},{extra}"
            query.start()
            # The stream's minutes count from its first output: setting up three brokers, Spark and
            # (provider) a javac, then the query's start, took over a minute under load, and a run
            # counting them had no traffic left and read nothing but in its drain.
            _await_output(gazette, outs, query)
            out(f"the query wrote its first output at {time.monotonic() - started:.0f} s")
            end = time.monotonic() + minutes * 60
            if rotate_key:
                time.sleep(max(0.0, (end - time.monotonic()) / 3))
                out(f"rotating the brokers' key at {time.monotonic() - started:.0f} s")
                rotate(
                    gazette,
                    security,
                    tokens,
                    summary,
                    out,
                    ttl + 6,
                    ins + outs + batch,
                    functools.partial(_alive, query),
                )
            while time.monotonic() < end:
                if query.exited():
                    raise RuntimeError(f"the query failed: {query.last_error()} (see {query.log})")
                time.sleep(1)
            out(f"stopping traffic at {time.monotonic() - started:.0f} s")
            traffic.send_signal(signal.SIGTERM)
            if traffic.wait(timeout=180) != 0:
                raise RuntimeError(f"judge traffic failed; see {work}/traffic.log")
            if query.exited():
                raise RuntimeError(f"the query failed: {query.last_error()} (see {query.log})")
            query.kill()
            chaos._await_whole(gazette, ins, out)
            heads = chaos._heads(gazette, ins) if real_time else None
            summary.stream.failures += chaos._drain(query, out, heads=heads)
            chaos._await_whole(gazette, outs, out)
            chaos._judge(gazette, ins, outs, summary.stream, real_time)
            # Tokens of BATCH_TTL s for the batch: 300,000 rows took 28 s to write and 11 s to read under
            # load, as long as a 30 s token lives, and a quiet machine is faster.
            tokens.ttl = summary.batch_ttl = min(ttl, BATCH_TTL)
            batch_options = {**options, **tokens.options()}
            _batch(spark.master, brokers, query.args[5], batch_options, rows, batch, gazette, summary, work, out)
            summary.refusals = _refusals_logged([work, spark.root])
            summary.shown = _shown(tokens.given(), [work, spark.root], tokens.secrets() | {security.directory})
        finally:
            if query:
                query.kill()
            if traffic:
                terminate(traffic.pid)
        summary.tokens, summary.refused_asks = tokens.provider_calls() if provider else (tokens.written, 0)
    summary.seconds = time.monotonic() - started
    if summary.ok:
        shutil.rmtree(work, ignore_errors=True)
    else:
        out(f"logs kept in {work}")
    return summary


def _alive(query) -> None:
    if query.exited():
        raise RuntimeError(f"the query failed: {query.last_error()} (see {query.log})")


def _refusals_logged(roots: list[str]) -> int:
    """Refusals the connector logged in the query's log (its driver logs at INFO) and its executors'."""
    count = 0
    for root in roots:
        for parent, _, files in os.walk(root):
            for name in files:
                if name.endswith(".log") or name == "stderr":
                    with open(os.path.join(parent, name), "rb") as f:
                        count += sum(1 for line in f if b"refused the bearer token" in line)
    return count


def _shown(signatures: set[str], roots: list[str], secrets: set[str]) -> list[str]:
    """The files under `roots` (the query's and the batch job's logs, checkpoint and plans, the Spark
    workers' and executors' logs) holding one of the tokens' signatures, but the token's own."""
    if not signatures:
        raise RuntimeError("no token was given: nothing to look for")
    needles = [s.encode() for s in signatures]
    shown = []
    for root in roots:
        for parent, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if os.path.join(parent, d) not in secrets]
            for name in files:
                path = os.path.join(parent, name)
                if path in secrets or name.endswith(".jar"):
                    continue
                try:
                    data = Path(path).read_bytes()
                except OSError:
                    continue
                if any(n in data for n in needles):
                    shown.append(path)
    return shown


def _await_output(gazette: LocalCluster, outs: list[str], query, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not any(0 < h < float("inf") for h in chaos._heads(gazette, outs).values()):
        if query.exited():
            raise RuntimeError(f"the query failed: {query.last_error()} (see {query.log})")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the query wrote nothing within {timeout:.0f} s (see {query.log})")
        time.sleep(1)


def _batch(master, brokers, jars, options, rows, journals, gazette, summary, work, out) -> None:
    """`rows` rows written by a batch query and read back by another, on the same renewing tokens;
    Gazette's reader counts them."""
    summary.batch_rows = rows
    log = os.path.join(work, "batch.log")
    with open(log, "ab") as f:
        done = subprocess.run(
            [sys.executable, str(HERE / "batch.py"), master, brokers, jars, json.dumps(options), str(rows)],
            stdout=subprocess.PIPE,
            stderr=f,
            text=True,
            timeout=1800,
        )
    if done.returncode != 0:
        raise RuntimeError(f"the batch job failed; see {log}")
    result = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))[7:])
    summary.batch_written, summary.batch_read = result["written"], result["read"]
    summary.batch_seconds = (result["write_s"], result["read_s"])
    out(f"batch: {rows} rows written in {result['write_s']:.0f} s, read in {result['read_s']:.0f} s")
    seen: dict[int, int] = {}
    for j in journals:
        for r in judge.each(gazette.broker, j):
            n = json.loads(r["payload"])["n"]
            seen[n] = seen.get(n, 0) + 1
    summary.batch_lost = sum(1 for n in range(rows) if n not in seen)
    summary.batch_duplicated = sum(c - 1 for c in seen.values())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=5)
    p.add_argument("--ttl", type=int, default=30, help="seconds each token lives")
    p.add_argument("--real-time", action="store_true")
    p.add_argument("--provider", action="store_true", help="tokens from a provider class, not a file")
    p.add_argument("--rows", type=int, default=300_000, help="rows of the batch write and read")
    a = p.parse_args()
    summary = run(a.minutes, a.ttl, a.real_time, a.provider, a.rows)
    print(summary)
    sys.exit(0 if summary.ok else 1)


if __name__ == "__main__":
    main()
