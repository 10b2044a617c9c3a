"""A local Gazette cluster: etcd plus N `gazette serve` brokers on loopback.

Every test suite and the demo run against this cluster. Processes listen on free 127.0.0.1
ports, keep their data in one temporary directory, and are always stopped: by `stop()`, by
the context manager, or, for clusters started through the CLI on behalf of another process,
by a watchdog that tears the cluster down when that owner process exits.

Fragments go to `file:///` stores under the brokers' file root. With `store="s3"` the cluster
also runs an S3 server on loopback, MinIO, which checks every request's signature, its objects in
the cluster's directory; the brokers get its credentials and a region, and journals choose it with
`store_url()`. `store="gofakes3"` runs gofakes3 in its place: it checks no signature, and starts in
tens of milliseconds where MinIO takes about half a second.

CLI (the state file describes a running cluster; `.cluster/` by default):
    python tests/harness/cluster.py up [--brokers N] [--port P] [--store file|s3|gofakes3] [--specs FILE ...]
        [--owner-pid PID]
    python tests/harness/cluster.py down
    python tests/harness/cluster.py stop-broker I | start-broker I
    python tests/harness/cluster.py stop-store | start-store
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path

import cloud_stores

ROOT = Path(__file__).resolve().parents[2]

# The S3 server's bucket, and the region and credentials the brokers sign with: MinIO's root user
# (gofakes3 checks no signature).
S3_BUCKET = "gazette"
S3_REGION = "us-east-1"
S3_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "harness", "AWS_SECRET_ACCESS_KEY": "harness-secret"}
# The `store`s of a cluster, and the binary of each one's S3 server.
STORES = ("file", "s3", "gofakes3", *cloud_stores.KINDS)
S3_SERVERS = {"s3": "minio", "gofakes3": "gofakes3"}


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
    host: str = "127.0.0.1"  # the address it advertises (its namespace's, under harness/network.py)

    @property
    def endpoint(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"


@dataclass
class State:
    root: str
    etcd_endpoint: str
    etcd_pid: int = 0
    brokers: list[Broker] = field(default_factory=list)
    watchdog_pid: int = 0
    store: str = "file"
    s3_port: int = 0
    s3_pid: int = 0  # the store's server, S3 or a cloud store's emulator
    store_address: str = ""  # a cloud store's emulator's loopback address (harness/cloud_stores.py)
    store_secret: str = ""
    store_revoked: bool = False  # the Azure emulator refuses the brokers' key

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
    # A zombie child (exited, not yet reaped) still answers kill(0). But a killed process's main
    # thread turns zombie before its other threads are gone, and until they are, its files (a
    # listening socket) stay open: it is dead once the main thread is all that is left.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z" or len(os.listdir(f"/proc/{pid}/task")) > 1
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


def s3_request(method: str, url: str, region: str = S3_REGION, credentials: dict = S3_CREDENTIALS):
    """A bodiless request to an S3 server, signed with AWS Signature Version 4 in its Authorization
    header, as the brokers sign theirs. `url`'s path and query are sent as given, so they must be
    encoded as SigV4's canonical form has them (`urllib.parse.quote`; `urlencode(..., quote_via=quote)`)."""
    u = urllib.parse.urlsplit(url)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    payload = hashlib.sha256(b"").hexdigest()
    headers = {"host": u.netloc, "x-amz-content-sha256": payload, "x-amz-date": now}
    query = "&".join("=".join(kv) for kv in sorted(q.partition("=")[::2] for q in u.query.split("&") if q))
    signed = ";".join(headers)  # lower-case and sorted
    canonical = "\n".join(
        [method, u.path or "/", query, *(f"{k}:{v}" for k, v in headers.items()), "", signed, payload]
    )
    scope = f"{now[:8]}/{region}/s3/aws4_request"
    to_sign = f"AWS4-HMAC-SHA256\n{now}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    key = ("AWS4" + credentials["AWS_SECRET_ACCESS_KEY"]).encode()
    for part in scope.split("/"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={credentials['AWS_ACCESS_KEY_ID']}/{scope}, "
        f"SignedHeaders={signed}, Signature={signature}"
    )
    return urllib.request.Request(url, method=method, headers=headers)


def _tag(element: ET.Element) -> str:
    """An XML element's tag without its namespace."""
    return element.tag.rsplit("}", 1)[-1]


def _child(element: ET.Element, tag: str) -> str:
    return next(c.text or "" for c in element if _tag(c) == tag)


class LocalCluster:
    """etcd and `brokers` Gazette brokers, started by `start()` and stopped by `stop()`."""

    def __init__(
        self,
        brokers: int = 1,
        root: str | None = None,
        log_level: str = "warn",
        security=None,
        etcd_lease: str = "5s",
        store: str = "file",
        network=None,
        port: int = 0,
    ):
        """`security` (harness/security.py) starts brokers that require TLS and/or tokens. A broker
        exits once etcd has not renewed its lease for `etcd_lease`. `store="s3"` also runs an S3
        server for the journals' fragments (`store_url()`), MinIO; `store="gofakes3"` runs gofakes3,
        which checks no signature. `network` (harness/network.py, with parties `etcd` and `broker-I`,
        and `s3` for the S3 server) runs etcd, each broker and the S3 server in namespaces of their
        own, at their addresses. `port` fixes the first broker's port (a free one by default)."""
        self.network = network
        if store not in STORES:
            raise ValueError(f"store must be one of {', '.join(STORES)}, not {store!r}")
        self.log_level = log_level
        self.etcd_lease = etcd_lease
        self.security = security
        self._own_root = root is None
        root = root or tempfile.mkdtemp(prefix="gazette-cluster-")
        self.state = State(
            root=root,
            etcd_endpoint=f"http://{network.address('etcd') if network else '127.0.0.1'}:{free_port()}",
            brokers=[
                Broker(
                    i,
                    port if i == 0 and port else free_port(),
                    scheme="https" if security and security.tls else "http",
                    host=network.address(f"broker-{i}") if network else "127.0.0.1",
                )
                for i in range(brokers)
            ],
            store=store,
            s3_port=free_port() if store in S3_SERVERS else 0,
            store_address=cloud_stores.new_address() if store in cloud_stores.KINDS else "",
            store_secret=cloud_stores.CloudStore.new_secret() if store in cloud_stores.KINDS else "",
        )
        self.etcd_bin = find_binary("etcd")
        self.gazette_bin = find_binary("gazette")
        self.gazctl_bin = find_binary("gazctl")
        self.s3_bin = _store_binary(store)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> LocalCluster:
        try:
            if self.state.store != "file":
                self.start_store()
            self._start_etcd()
            for b in self.state.brokers:
                self.start_broker(b.index)
            self._wait_members(len(self.state.brokers))
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        # Nothing reads a stopped cluster's journals again (every start has a new root), and a
        # broker asked to stop waits for another to take its journals over, ten seconds when it
        # is the only one: the brokers are given half a second.
        for b in self.state.brokers:
            terminate(b.pid, grace=0.5)
            b.pid = 0
        terminate(self.state.etcd_pid)
        self.state.etcd_pid = 0
        terminate(self.state.s3_pid)
        self.state.s3_pid = 0
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

    @property
    def s3_endpoint(self) -> str:
        """The S3 server's endpoint, `http://127.0.0.1:PORT` (an `s3` or `gofakes3` cluster only)."""
        self._require_s3()
        return f"http://{self._s3_host}:{self.state.s3_port}"

    @property
    def _s3_host(self) -> str:
        """Where the S3 server listens: the `s3` party's address under harness/network.py, or loopback."""
        network = getattr(self, "network", None)
        return network.address("s3") if network and "s3" in network.parties else "127.0.0.1"

    def store_url(self, prefix: str = "") -> str:
        """The fragment store for journal specs: `file:///PREFIX` under the brokers' file root, or in
        an `s3` (`gofakes3`) cluster `s3://gazette/PREFIX?endpoint=...&region=us-east-1` on its S3 server.
        `prefix` is "" or ends in "/"."""
        if prefix and not prefix.endswith("/"):
            raise ValueError(f"a store prefix ends in '/': {prefix!r}")
        if self.state.store in cloud_stores.KINDS:
            return self.cloud_store.store_url(prefix)
        if self.state.store == "file":
            return f"file:///{prefix}"
        query = urllib.parse.urlencode({"endpoint": self.s3_endpoint, "region": S3_REGION})
        return f"s3://{S3_BUCKET}/{prefix}?{query}"

    def s3_keys(self, prefix: str = "") -> list[str]:
        """The keys of the S3 server's bucket under `prefix` (ListObjectsV2, every page, signed)."""
        keys: list[str] = []
        token = None
        while True:
            query = {"list-type": "2", "prefix": prefix, **({"continuation-token": token} if token else {})}
            url = f"{self.s3_endpoint}/{S3_BUCKET}?{urllib.parse.urlencode(query, quote_via=urllib.parse.quote)}"
            with urllib.request.urlopen(s3_request("GET", url), timeout=10) as r:
                page = ET.fromstring(r.read())
            keys += [_child(c, "Key") for c in page if _tag(c) == "Contents"]
            token = next((c.text for c in page if _tag(c) == "NextContinuationToken"), None)
            if not token:
                return keys

    # -- processes ---------------------------------------------------------------------------

    def _spawn(self, args: list[str], log_name: str, env: dict[str, str] | None = None) -> int:
        network = getattr(self, "network", None)
        party = log_name.rsplit(".", 1)[0]  # etcd, broker-I
        if network and party in network.parties:
            args = network.prefix(party) + args  # it execs: the pid stays the program's
        os.makedirs(self.state.root, exist_ok=True)
        log = open(os.path.join(self.state.root, log_name), "ab")
        # A new session keeps a terminal's Ctrl-C from racing our own orderly shutdown.
        proc = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, env=env
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

    @property
    def cloud_store(self) -> cloud_stores.CloudStore:
        """The emulator of a `gcs` or `azure` cluster."""
        if self.state.store not in cloud_stores.KINDS:
            raise RuntimeError("this cluster has no cloud store: start it with store='gcs' or 'azure'")
        return cloud_stores.CloudStore(
            self.state.store,
            os.path.join(self.state.root, "cloud"),
            self.state.store_address,
            self.state.store_secret,
            self.state.store_revoked,
        )

    def revoke_store_key(self, revoked: bool = True) -> None:
        """Restarts the Azure emulator with an account key other than the brokers' (as a key
        rotated under them): it answers their requests and signed URLs 403. `revoked=False` gives
        it their key again."""
        if self.state.store != "azure":
            raise RuntimeError("only an azure cluster's store checks the brokers' key")
        self.stop_store()
        self.state.store_revoked = revoked
        self.start_store()

    def store_keys(self, prefix: str = "") -> list[str]:
        """The names of the store's objects under `prefix` (S3 or a cloud store)."""
        return self.cloud_store.keys(prefix) if self.state.store in cloud_stores.KINDS else self.s3_keys(prefix)

    def delete_store_object(self, key: str) -> None:
        if self.state.store in cloud_stores.KINDS:
            self.cloud_store.delete(key)
        else:
            url = f"{self.s3_endpoint}/{S3_BUCKET}/{urllib.parse.quote(key)}"
            urllib.request.urlopen(s3_request("DELETE", url), timeout=10).close()

    def start_store(self) -> None:
        """Starts the store's server (again) on its port, over the objects it kept in the cluster's
        directory, and creates the bucket on its first start."""
        if self.state.store in cloud_stores.KINDS:
            self._start_cloud_store()
            return
        self._require_s3()
        if alive(self.state.s3_pid):
            return
        data = os.path.join(self.state.root, "s3")
        first = not os.path.exists(data)
        address = f"{self._s3_host}:{self.state.s3_port}"
        if self.state.store == "s3":
            # MinIO, its console off; its root user is the brokers' credentials.
            user, password = S3_CREDENTIALS["AWS_ACCESS_KEY_ID"], S3_CREDENTIALS["AWS_SECRET_ACCESS_KEY"]
            env = {**os.environ, "MINIO_ROOT_USER": user, "MINIO_ROOT_PASSWORD": password, "MINIO_BROWSER": "off"}
            args = [self.s3_bin, "server", data, "--address", address, "--quiet"]
        else:
            env = None
            args = [self.s3_bin, "-backend", "fs", "-fs.path", data, "-fs.create", "-host", address, "-quiet"]
        self.state.s3_pid = self._spawn(args, "s3.log", env=env)
        self._wait(
            self._s3_serves,
            "the S3 server to serve",
            self.state.s3_pid,
            "s3.log",
            poll=0.01,
        )
        if first:
            urllib.request.urlopen(s3_request("PUT", f"{self.s3_endpoint}/{S3_BUCKET}"), timeout=10).close()

    def _start_cloud_store(self) -> None:
        if alive(self.state.s3_pid):
            return
        store = self.cloud_store
        first = not os.path.exists(store.hosts_file)
        store.prepare()
        args, env = store.command(self.s3_bin)
        self.state.s3_pid = self._spawn(args, "store.log", env=env)
        self._wait(store.serves, "the store's emulator to serve", self.state.s3_pid, "store.log", poll=0.05)
        if first:
            store.create_bucket()

    def _s3_serves(self) -> bool:
        """Whether the S3 server answers a signed ListBuckets. (MinIO is live, /minio/health/live, a
        little before it serves S3 requests: until then it answers 503.)"""
        try:
            with urllib.request.urlopen(s3_request("GET", self.s3_endpoint + "/"), timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def stop_store(self) -> None:
        """Kills the store's server (SIGKILL, as a crash); `start_store()` brings it back with its objects.
        Azurite keeps its index of blobs in memory and saves it every 5 s, so a crash right after
        a write loses blobs it acknowledged, which Azure never does (seen: every fragment the broker
        had listed was gone after a restart): it is killed once a save has passed."""
        if self.state.store not in cloud_stores.KINDS:
            self._require_s3()
        if self.state.store == "azure" and alive(self.state.s3_pid):
            time.sleep(cloud_stores.AZURITE_SAVE_SECONDS)
        if alive(self.state.s3_pid):
            os.kill(self.state.s3_pid, signal.SIGKILL)
        terminate(self.state.s3_pid)  # reaps it
        self.state.s3_pid = 0

    def _require_s3(self) -> None:
        if self.state.store not in S3_SERVERS:
            raise RuntimeError("this cluster has no S3 server: start it with store='s3' (or 'gofakes3')")

    def _broker_env(self) -> dict[str, str] | None:
        """The brokers' environment: in an `s3` or `gofakes3` cluster, the S3 server's region and
        credentials in place of whatever AWS settings this process has; in a `gcs` or `azure`
        cluster, the cloud store's credentials and its emulator's CA."""
        if self.state.store in cloud_stores.KINDS:
            return self.cloud_store.broker_env(dict(os.environ))
        if self.state.store not in S3_SERVERS:
            return None
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        return {**env, **S3_CREDENTIALS, "AWS_REGION": S3_REGION, "AWS_EC2_METADATA_DISABLED": "true"}

    def start_broker(self, index: int) -> None:
        b = self.state.brokers[index]
        if alive(b.pid):
            return
        # A cloud store's brokers resolve its host to the emulator (harness/cloud_stores.py).
        hosts = self.cloud_store.broker_prefix() if self.state.store in cloud_stores.KINDS else []
        b.pid = self._spawn(
            [
                *hosts,
                self.gazette_bin,
                "serve",
                "--broker.host",
                b.host,
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
            env=self._broker_env(),
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

    def gazctl_json(self, *args: str, broker: str | None = None, timeout: float | None = None) -> str:
        """What `gazctl journals ARGS` prints as JSON against this cluster (through `broker`, by
        default the first one)."""
        return subprocess.run(
            [
                self.gazctl_bin,
                "journals",
                *args,
                "--broker.address",
                broker or self.broker,
                "--format",
                "json",
                "--log.level",
                "warn",
                *self._flags("gazctl_flags"),
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=timeout,
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

    def write_head(self, journal: str) -> int:
        """The journal's write head, as its primary's pipeline has it: what a zero-byte append
        answers. Unlike a listing of fragments or a non-blocking read, which stop at the fragments
        the primary has indexed, it counts bytes that a restarted primary has not listed yet."""
        security = getattr(self, "security", None)
        req = urllib.request.Request(
            f"{self.broker}/{journal}",
            method="PUT",
            data=b"",
            headers=security.http_headers() if security else {},
        )
        with urllib.request.urlopen(req, timeout=30, context=security.ssl_context() if security else None) as r:
            return int(r.headers["X-Write-Head"])

    # -- helpers ---------------------------------------------------------------------------------

    def _flags(self, which: str) -> list[str]:
        security = getattr(self, "security", None)
        return getattr(security, which)() if security else []

    def _http_ok(self, url: str, method: str = "GET", plain: bool = False) -> bool:
        """Whether `url` answers 2xx; to a broker's (with the cluster's TLS and token) unless `plain`."""
        security = None if plain else getattr(self, "security", None)
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

    def _wait(
        self, ready, what: str, pid: int | None, log: str | None, timeout: float = 30.0, poll: float = 0.1
    ) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            if pid is not None and not alive(pid):
                raise RuntimeError(f"gave up waiting for {what}: the process exited\n{self._tail(log)}")
            time.sleep(poll)
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
    c.s3_bin = _store_binary(c.state.store)
    return c


def _store_binary(store: str) -> str | None:
    if store in cloud_stores.KINDS:
        return cloud_stores.emulator_binary(store, find_binary)
    return find_binary(S3_SERVERS[store]) if store in S3_SERVERS else None


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
    up.add_argument("--port", type=int, default=0, help="the first broker's port (a free one by default)")
    up.add_argument(
        "--store", choices=STORES, default="file", help="s3: also run an S3 server for fragments (MinIO; or gofakes3)"
    )
    up.add_argument("--specs", action="append", default=[], help="journal specs (YAML) to apply")
    up.add_argument("--owner-pid", type=int, default=0, help="tear down when this process exits")
    sub.add_parser("down", help="stop the cluster")
    for name in ("stop-broker", "start-broker"):
        sub.add_parser(name).add_argument("index", type=int)
    sub.add_parser("stop-store", help="kill the store's server")
    sub.add_parser("revoke-store-key", help="azure: the store refuses the brokers' key from now on")
    sub.add_parser("restore-store-key", help="azure: the store takes the brokers' key again")
    sub.add_parser("store-keys", help="print the store's object names under a prefix").add_argument("prefix")
    sub.add_parser("delete-store-object", help="delete one of the store's objects").add_argument("key")
    sub.add_parser("start-store", help="start the S3 server again, on its port and objects")
    args = p.parse_args(argv)

    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    state_file = d / "state.json"

    if args.cmd == "up":
        if state_file.exists():
            _down(state_file)
        cluster = LocalCluster(
            brokers=args.brokers,
            root=tempfile.mkdtemp(prefix="gazette-cluster-"),
            store=args.store,
            port=args.port,
        )
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
        if args.store in S3_SERVERS:
            env += f"GAZETTE_S3_STORE={cluster.store_url()}\nGAZETTE_S3_ENDPOINT={cluster.s3_endpoint}\n"
            # What a client needs to sign its own requests to the server.
            env += f"GAZETTE_S3_REGION={S3_REGION}\n"
            env += "".join(f"GAZETTE_S3_{k.removeprefix('AWS_')}={v}\n" for k, v in S3_CREDENTIALS.items())
        if args.store in cloud_stores.KINDS:
            store = cluster.cloud_store
            # What a reader of the store's signed URLs needs: where the cloud host is, the CA to trust.
            env += f"GAZETTE_STORE_URL={cluster.store_url()}\nGAZETTE_STORE_HOST={store.host}\n"
            env += f"GAZETTE_STORE_ADDRESS={store.address}\nGAZETTE_STORE_CA={store.ca_file}\n"
        (d / "env").write_text(env)
        print(env, end="")
    elif args.cmd == "down":
        _down(state_file)
    elif args.cmd in ("revoke-store-key", "restore-store-key"):
        c = _cluster_from(state_file)
        c.revoke_store_key(args.cmd == "revoke-store-key")
        c.state.save(state_file)
    elif args.cmd == "store-keys":
        print("\n".join(_cluster_from(state_file).store_keys(args.prefix)))
    elif args.cmd == "delete-store-object":
        _cluster_from(state_file).delete_store_object(args.key)
    elif args.cmd in ("stop-store", "start-store"):
        c = _cluster_from(state_file)
        (c.stop_store if args.cmd == "stop-store" else c.start_store)()
        c.state.save(state_file)
    else:
        c = _cluster_from(state_file)
        (c.stop_broker if args.cmd == "stop-broker" else c.start_broker)(args.index)
        c.state.save(state_file)


if __name__ == "__main__":
    main(sys.argv[1:])
