"""A local Gazette cluster: etcd plus N `gazette serve` brokers on loopback.

Every test suite and the demo run against this cluster. Processes listen on free 127.0.0.1
ports, keep their data in one temporary directory, and are always stopped: by `stop()`, by
the context manager, or, for clusters started through the CLI on behalf of another process,
by a watchdog that tears the cluster down when that owner process exits.

CLI (the state file describes a running cluster; `.cluster/` by default):
    python tests/harness/cluster.py up [--brokers N] [--specs FILE ...] [--owner-pid PID]
    python tests/harness/cluster.py down
    python tests/harness/cluster.py stop-broker I | start-broker I
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_binary(name: str) -> str:
    """The pinned build that `make setup` puts in Go's bin directory wins over anything on PATH."""
    gopath = subprocess.run(["go", "env", "GOPATH"], capture_output=True, text=True).stdout.strip()
    for candidate in (gopath and os.path.join(gopath, "bin", name), shutil.which(name)):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(f"{name} is not installed; run `make setup`")


@dataclass
class Broker:
    index: int
    port: int
    pid: int = 0
    scheme: str = "http"

    @property
    def endpoint(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"


@dataclass
class State:
    root: str
    etcd_endpoint: str
    etcd_pid: int = 0
    brokers: list[Broker] = field(default_factory=list)
    watchdog_pid: int = 0

    @staticmethod
    def load(path: Path) -> State:
        raw = json.loads(path.read_text())
        raw["brokers"] = [Broker(**b) for b in raw["brokers"]]
        return State(**raw)

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2))
        tmp.replace(path)


def alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child (exited, not yet reaped) still answers kill(0).
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def terminate(pid: int, grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds."""
    if not alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while alive(pid) and time.monotonic() < deadline:
        _reap(pid)
        time.sleep(0.05)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)
        while alive(pid):
            _reap(pid)
            time.sleep(0.02)
    _reap(pid)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


class LocalCluster:
    """etcd and `brokers` Gazette brokers, started by `start()` and stopped by `stop()`."""

    def __init__(
        self, brokers: int = 1, root: str | None = None, log_level: str = "warn", security=None, etcd_lease: str = "5s"
    ):
        """`security` (harness/security.py) starts brokers that require TLS and/or tokens. A broker
        exits once etcd has not renewed its lease for `etcd_lease`."""
        self.log_level = log_level
        self.etcd_lease = etcd_lease
        self.security = security
        self._own_root = root is None
        root = root or tempfile.mkdtemp(prefix="gazette-cluster-")
        self.state = State(
            root=root,
            etcd_endpoint=f"http://127.0.0.1:{free_port()}",
            brokers=[
                Broker(i, free_port(), scheme="https" if security and security.tls else "http") for i in range(brokers)
            ],
        )
        self.etcd_bin = find_binary("etcd")
        self.gazette_bin = find_binary("gazette")
        self.gazctl_bin = find_binary("gazctl")

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> LocalCluster:
        try:
            self._start_etcd()
            for b in self.state.brokers:
                self.start_broker(b.index)
            self._wait_members(len(self.state.brokers))
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for b in self.state.brokers:
            terminate(b.pid)
            b.pid = 0
        terminate(self.state.etcd_pid)
        self.state.etcd_pid = 0
        if self._own_root:
            shutil.rmtree(self.state.root, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def broker(self) -> str:
        return self.state.brokers[0].endpoint

    @property
    def fragment_root(self) -> str:
        """Directory that the brokers' `file:///` fragment stores map to."""
        return os.path.join(self.state.root, "fragments")

    # -- processes ---------------------------------------------------------------------------

    def _spawn(self, args: list[str], log_name: str) -> int:
        log = open(os.path.join(self.state.root, log_name), "ab")
        # A new session keeps a terminal's Ctrl-C from racing our own orderly shutdown.
        proc = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
        log.close()
        return proc.pid

    def _start_etcd(self) -> None:
        os.makedirs(self.fragment_root, exist_ok=True)
        # The same peer address on a restart: the data directory remembers the member by it.
        peer = self._etcd_peer = getattr(self, "_etcd_peer", None) or f"http://127.0.0.1:{free_port()}"
        self.state.etcd_pid = self._spawn(
            [
                self.etcd_bin,
                "--name",
                "etcd",
                "--data-dir",
                os.path.join(self.state.root, "etcd"),
                "--listen-client-urls",
                self.state.etcd_endpoint,
                "--advertise-client-urls",
                self.state.etcd_endpoint,
                "--listen-peer-urls",
                peer,
                "--initial-advertise-peer-urls",
                peer,
                "--initial-cluster",
                f"etcd={peer}",
                "--log-level",
                "error",
            ],
            "etcd.log",
        )
        self._wait(
            lambda: self._http_ok(self.state.etcd_endpoint + "/health"),
            "etcd to be healthy",
            self.state.etcd_pid,
            "etcd.log",
        )

    def restart_etcd(self, down: float = 0.0) -> None:
        """Kills etcd (SIGKILL, as a crash) and starts it again on the same data directory after
        `down` seconds."""
        os.kill(self.state.etcd_pid, signal.SIGKILL)
        terminate(self.state.etcd_pid)  # reaps it
        time.sleep(down)
        self._start_etcd()

    def start_broker(self, index: int) -> None:
        b = self.state.brokers[index]
        if alive(b.pid):
            return
        b.pid = self._spawn(
            [
                self.gazette_bin,
                "serve",
                "--broker.host",
                "127.0.0.1",
                "--broker.port",
                str(b.port),
                "--broker.id",
                f"broker-{index}",
                "--broker.file-root",
                self.fragment_root,
                "--etcd.address",
                self.state.etcd_endpoint,
                "--etcd.lease",
                getattr(self, "etcd_lease", "5s"),
                "--log.level",
                self.log_level,
                *self._flags("broker_flags"),
            ],
            f"broker-{index}.log",
        )
        self._wait(
            lambda: self._http_ok(b.endpoint + "/debug/ready"), f"broker {index} to serve", b.pid, f"broker-{index}.log"
        )

    def stop_broker(self, index: int) -> None:
        b = self.state.brokers[index]
        terminate(b.pid)
        b.pid = 0

    def kill_broker(self, index: int) -> None:
        """SIGKILL, as a crash: no graceful hand-off of the broker's journals."""
        b = self.state.brokers[index]
        if alive(b.pid):
            os.kill(b.pid, signal.SIGKILL)
            while alive(b.pid):
                time.sleep(0.02)
        _reap(b.pid)
        b.pid = 0

    def _wait_members(self, n: int) -> None:
        """Waits until etcd lists `n` brokers, so that journals applied next get assigned."""

        def members() -> bool:
            out = subprocess.run(
                [
                    self.gazctl_bin,
                    "journals",
                    "list",
                    "--broker.address",
                    self.broker,
                    "--format",
                    "json",
                    *self._flags("gazctl_flags"),
                ],
                capture_output=True,
                text=True,
            )
            return out.returncode == 0

        self._wait(members, "brokers to answer List", self.state.brokers[0].pid, "broker-0.log")

    # -- journals ------------------------------------------------------------------------------

    def apply(self, specs_yaml: str) -> None:
        """Applies journal specs in gazctl's YAML form and waits until every journal is writable."""
        out = subprocess.run(
            [
                self.gazctl_bin,
                "journals",
                "apply",
                "--broker.address",
                self.broker,
                "--specs",
                "-",
                "--log.level",
                "warn",
                *self._flags("gazctl_flags"),
            ],
            input=specs_yaml,
            capture_output=True,
            text=True,
        )
        if out.returncode != 0:
            raise RuntimeError(f"gazctl journals apply failed: {out.stderr.strip()}")
        self.wait_writable()

    def gazctl_json(self, *args: str) -> str:
        """What `gazctl journals ARGS` prints as JSON against this cluster."""
        return subprocess.run(
            [
                self.gazctl_bin,
                "journals",
                *args,
                "--broker.address",
                self.broker,
                "--format",
                "json",
                "--log.level",
                "warn",
                *self._flags("gazctl_flags"),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    def journals(self) -> list[dict]:
        return json.loads(self.gazctl_json("list") or "{}").get("journals", [])

    def fragments(self, journal: str) -> list[dict]:
        """The fragments the brokers serve `journal` from, as gazctl prints them (`begin` left out
        when 0); one with a `backing_store` is served from the store, one without from a spool."""
        out = self.gazctl_json("fragments", "--selector", f"name={journal}")
        return [json.loads(line)["spec"] for line in out.splitlines() if line.strip()]

    def wait_writable(self, timeout: float = 60.0) -> None:
        """Waits until every journal has a full route, then proves it with a zero-byte append."""

        def assigned() -> bool:
            for j in self.journals():
                route = j.get("route", {})
                want = j["spec"].get("replication", 1)
                if route.get("primary", -1) < 0 or len(route.get("members", [])) < want:
                    return False
            return True

        self._wait(assigned, "journals to be assigned", None, None, timeout)
        for j in self.journals():
            name = j["spec"]["name"]
            self._wait(
                lambda name=name: self._http_ok(f"{self.broker}/{name}", method="PUT"),
                f"journal {name} to accept appends",
                None,
                None,
                timeout,
            )

    # -- helpers ---------------------------------------------------------------------------------

    def _flags(self, which: str) -> list[str]:
        security = getattr(self, "security", None)
        return getattr(security, which)() if security else []

    def _http_ok(self, url: str, method: str = "GET") -> bool:
        security = getattr(self, "security", None)
        try:
            req = urllib.request.Request(
                url,
                method=method,
                data=b"" if method == "PUT" else None,
                headers=security.http_headers() if security else {},
            )
            context = security.ssl_context() if security else None
            with urllib.request.urlopen(req, timeout=2, context=context) as r:
                return 200 <= r.status < 300
        except OSError:
            return False

    def _wait(self, ready, what: str, pid: int | None, log: str | None, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            if pid is not None and not alive(pid):
                raise RuntimeError(f"gave up waiting for {what}: the process exited\n{self._tail(log)}")
            time.sleep(0.1)
        raise TimeoutError(f"gave up waiting for {what} after {timeout:.0f}s\n{self._tail(log)}")

    def _tail(self, log: str | None) -> str:
        if not log:
            return ""
        try:
            return Path(self.state.root, log).read_text()[-2000:]
        except OSError:
            return ""


# -- CLI -----------------------------------------------------------------------------------------


def _cluster_from(state_file: Path) -> LocalCluster:
    c = LocalCluster.__new__(LocalCluster)
    c.state = State.load(state_file)
    c.log_level = "warn"
    c._own_root = True
    c.etcd_bin, c.gazette_bin, c.gazctl_bin = (find_binary(n) for n in ("etcd", "gazette", "gazctl"))
    return c


def _watchdog(state_file: Path, owner: int) -> int:
    """Forks a process that tears the cluster down once `owner` exits."""
    pid = os.fork()
    if pid:
        return pid
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    while alive(owner) and state_file.exists():
        time.sleep(0.5)
    if state_file.exists():
        _down(state_file, from_watchdog=True)
    os._exit(0)


def _down(state_file: Path, from_watchdog: bool = False) -> None:
    if not state_file.exists():
        return
    c = _cluster_from(state_file)
    if not from_watchdog and c.state.watchdog_pid:
        try:
            os.kill(c.state.watchdog_pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    c.stop()
    state_file.unlink(missing_ok=True)
    state_file.with_name("env").unlink(missing_ok=True)


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default=str(ROOT / ".cluster"), help="where the state and env files live")
    sub = p.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start a cluster and print its broker address")
    up.add_argument("--brokers", type=int, default=1)
    up.add_argument("--specs", action="append", default=[], help="journal specs (YAML) to apply")
    up.add_argument("--owner-pid", type=int, default=0, help="tear down when this process exits")
    sub.add_parser("down", help="stop the cluster")
    for name in ("stop-broker", "start-broker"):
        sub.add_parser(name).add_argument("index", type=int)
    args = p.parse_args(argv)

    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    state_file = d / "state.json"

    if args.cmd == "up":
        if state_file.exists():
            _down(state_file)
        cluster = LocalCluster(brokers=args.brokers, root=tempfile.mkdtemp(prefix="gazette-cluster-"))
        cluster.start()
        try:
            for spec in args.specs:
                cluster.apply(Path(spec).read_text())
            cluster.state.save(state_file)
            if args.owner_pid:
                cluster.state.watchdog_pid = _watchdog(state_file, args.owner_pid)
                cluster.state.save(state_file)
        except BaseException:
            cluster.stop()
            shutil.rmtree(cluster.state.root, ignore_errors=True)
            state_file.unlink(missing_ok=True)
            raise
        env = (
            f"GAZETTE_BROKER={cluster.broker}\n"
            f"GAZETTE_BROKERS={','.join(b.endpoint for b in cluster.state.brokers)}\n"
            f"GAZETTE_FRAGMENT_ROOT={cluster.fragment_root}\n"
            f"ETCD_ENDPOINT={cluster.state.etcd_endpoint}\n"
        )
        (d / "env").write_text(env)
        print(env, end="")
    elif args.cmd == "down":
        _down(state_file)
    else:
        c = _cluster_from(state_file)
        (c.stop_broker if args.cmd == "stop-broker" else c.start_broker)(args.index)
        c.state.save(state_file)


if __name__ == "__main__":
    main(sys.argv[1:])
