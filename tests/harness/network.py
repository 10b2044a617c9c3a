"""Network faults between named parties on this machine: each party (a broker, etcd, Spark, ...)
in its own network namespace, joined by veth pairs to one bridge in the root namespace, with
addresses from a private /24 (the root namespace is `.1`); nftables drop rules partition two
parties (both directions, or one); a toxiproxy server in the root namespace adds latency,
bandwidth caps, resets and blackholes to the links it carries. Everything is torn down when
`stop()` runs, at exit, or, should this process be killed, by a watchdog process that notices it
gone.

    with Network(["etcd", "broker-0", "broker-1", "spark"]) as net:
        subprocess.Popen([*net.prefix("broker-0"), "gazette", "serve", ...])  # runs inside its namespace
        net.partition("spark", "broker-0", "both")           # or "to" / "from": spark -> broker only, ...
        net.heal()                                           # every partition removed
        net.proxy_into("spark", "broker-0", 8080)            # spark's dials of broker-0:8080 via toxiproxy
        net.toxic("broker-0", "latency", latency=500)        # on that proxy; net.clear_toxics()

Partitions match connections by conntrack's original tuple, so they hold for connections that a
namespace's NAT (proxy_into) sends through the proxy. Traffic stays on this machine: only the
addresses of namespaces made here and loopback are used.

    python tests/harness/network.py clean    # what a killed run left (every gzn* name); not while one runs
"""

from __future__ import annotations

import atexit
import ipaddress
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

from cluster import alive, find_binary, free_port, terminate

PREFIX = "gzn"  # of every namespace, bridge and veth made here: `clean` finds leftovers by it
DIRECTIONS = ("both", "to", "from")  # partition(a, b, d): both ways, a -> b dropped, b -> a dropped


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def _nft(netns: str, script: str) -> None:
    out = subprocess.run(["ip", "netns", "exec", netns, "nft", "-f", "-"], input=script, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"nft in {netns} refused:\n{script}\n{out.stderr.strip()}")


class Network:
    def __init__(self, parties: list[str], log_dir: str | None = None):
        if not shutil.which("nft"):
            raise FileNotFoundError("nft is not installed; run `make setup`")
        self.tag = f"{random.randrange(1 << 16):04x}"
        self.subnet = self._free_subnet()
        hosts = list(self.subnet.hosts())
        self.gateway = str(hosts[0])  # the root namespace's address on the bridge
        self.parties = {p: str(hosts[i + 1]) for i, p in enumerate(parties)}
        self.bridge = f"{PREFIX}{self.tag}"
        self.log_dir = log_dir
        self.partitions: list[tuple[str, str, str]] = []
        self.nat: dict[str, list[tuple[str, int, int]]] = {}  # party -> (upstream party, port, proxy port)
        self.proxies: dict[str, str] = {}  # upstream party -> proxy name
        self.toxiproxy_pid = 0
        self.api = ""
        self._watchdog: subprocess.Popen | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> Network:
        try:
            _ip("link", "add", self.bridge, "type", "bridge")
            _ip("addr", "add", f"{self.gateway}/{self.subnet.prefixlen}", "dev", self.bridge)
            _ip("link", "set", self.bridge, "up")
            for i, (party, address) in enumerate(self.parties.items()):
                ns, host, peer = self.netns(party), f"{self.bridge}h{i}", f"{self.bridge}p{i}"
                _ip("netns", "add", ns)
                _ip("link", "add", host, "type", "veth", "peer", "name", peer, "netns", ns)
                _ip("link", "set", host, "master", self.bridge, "up")
                _ip("-n", ns, "link", "set", "lo", "up")
                _ip("-n", ns, "addr", "add", f"{address}/{self.subnet.prefixlen}", "dev", peer)
                _ip("-n", ns, "link", "set", peer, "up")
                _ip("-n", ns, "route", "add", "default", "via", self.gateway)
                self._rules(party)  # conntrack on from the start: partitions see every connection whole
            self._watch()
            atexit.register(self.stop)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stops toxiproxy and every process left in the namespaces, removes them and the bridge."""
        if self._watchdog and self._watchdog.poll() is None:
            self._watchdog.stdin.close()  # it tears down on EOF
            self._watchdog.wait(60)
        else:
            _teardown(self._spec())
        self._watchdog = None
        self.toxiproxy_pid = 0

    def __enter__(self) -> Network:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _spec(self) -> dict:
        return {
            "namespaces": [self.netns(p) for p in self.parties],
            "bridge": self.bridge,
            "pids": [self.toxiproxy_pid] if self.toxiproxy_pid else [],
        }

    def _watch(self) -> None:
        """A process that tears everything down once this one closes its stdin (stop(), or exit)."""
        if self._watchdog and self._watchdog.poll() is None:
            self._watchdog.kill()  # replaced by one that knows the new spec
            self._watchdog.wait()
        self._watchdog = subprocess.Popen(
            [sys.executable, __file__, "watchdog", json.dumps(self._spec())],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, "PYTHONPATH": os.path.dirname(__file__)},
        )

    def _free_subnet(self) -> ipaddress.IPv4Network:
        used = _ip("-4", "-o", "addr", "show").stdout
        for _ in range(100):
            net = ipaddress.IPv4Network(f"10.{random.randrange(64, 128)}.{random.randrange(1, 255)}.0/24")
            if f" {net.network_address}"[:-1] not in used:
                return net
        raise RuntimeError("no free private /24 for the network faults")

    # -- parties ---------------------------------------------------------------------------

    def netns(self, party: str) -> str:
        return f"{PREFIX}{self.tag}-{party}"

    def address(self, party: str) -> str:
        return self.parties[party]

    def prefix(self, party: str) -> list[str]:
        """The command prefix that runs a program inside `party`'s namespace (it execs: the pid is
        the program's)."""
        return ["ip", "netns", "exec", self.netns(party)]

    # -- partitions --------------------------------------------------------------------------

    def partition(self, a: str, b: str, direction: str = "both") -> None:
        """Drops packets between parties a and b: `both` ways, a -> b only (`to`), or b -> a
        only (`from`). Rules sit in a's namespace."""
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, not {direction!r}")
        self.partitions.append((a, b, direction))
        self._rules(a)

    def heal(self) -> None:
        """Removes every partition."""
        touched = {a for a, _, _ in self.partitions}
        self.partitions = []
        for party in touched:
            self._rules(party)

    def _rules(self, party: str) -> None:
        """Writes `party`'s whole table at once: its partitions' drop rules and its NAT into proxies.
        A packet goes to B when its connection's original tuple names B as destination (and it
        travels in the original direction) or as source (in the reply direction): whoever opened the
        connection, and whatever NAT did to its addresses."""
        drops = {"input": [], "output": []}
        for a, b, direction in self.partitions:
            if a != party:
                continue
            peer = self.parties[b]
            if direction in ("both", "to"):
                drops["output"] += [
                    f"ct direction original ct original ip daddr {peer} drop",
                    f"ct direction reply ct original ip saddr {peer} drop",
                ]
            if direction in ("both", "from"):
                drops["input"] += [
                    f"ct direction original ct original ip saddr {peer} drop",
                    f"ct direction reply ct original ip daddr {peer} drop",
                ]
        lines = ["table inet gznet", "delete table inet gznet", "table inet gznet {"]
        for hook in ("input", "output"):
            lines += [f"  chain {hook} {{", f"    type filter hook {hook} priority 0; policy accept;"]
            lines += ["    ct state established counter"] + [f"    {r}" for r in drops[hook]] + ["  }"]
        lines += ["}", "table ip gznat", "delete table ip gznat", "table ip gznat {", "  chain output {"]
        lines += ["    type nat hook output priority -100; policy accept;"]
        for upstream, port, proxy_port in self.nat.get(party, []):
            lines.append(f"    ip daddr {self.parties[upstream]} tcp dport {port} dnat to {self.gateway}:{proxy_port}")
        lines += ["  }", "}"]
        _nft(self.netns(party), "\n".join(lines) + "\n")

    # -- toxiproxy ---------------------------------------------------------------------------

    def start_toxiproxy(self) -> None:
        if self.toxiproxy_pid:
            return
        port = free_port()
        log = open(os.path.join(self.log_dir or "/tmp", f"toxiproxy-{self.tag}.log"), "ab")
        proc = subprocess.Popen(
            [find_binary("toxiproxy-server"), "-host", "127.0.0.1", "-port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()
        self.toxiproxy_pid, self.api = proc.pid, f"http://127.0.0.1:{port}"
        self._watch()
        deadline = time.monotonic() + 30
        while True:
            try:
                self._api("GET", "/version")
                return
            except OSError:
                if time.monotonic() > deadline or not alive(proc.pid):
                    raise RuntimeError("toxiproxy-server did not start") from None
                time.sleep(0.1)

    def proxy_into(self, client: str, upstream: str, port: int) -> str:
        """Sends `client`'s connections to `upstream`:`port` through a toxiproxy proxy (NAT in the
        client's namespace: the client dials the address it always dials); the proxy's name."""
        self.start_toxiproxy()
        name = self.proxies.get(upstream) or f"{upstream}-{port}"
        if upstream not in self.proxies:
            listen = free_port()
            self._api(
                "POST",
                "/proxies",
                {"name": name, "listen": f"{self.gateway}:{listen}", "upstream": f"{self.parties[upstream]}:{port}"},
            )
            self.proxies[upstream] = name
            self.nat.setdefault(client, []).append((upstream, port, listen))
            self._rules(client)
        return name

    def toxic(self, upstream: str, kind: str, stream: str = "downstream", toxicity: float = 1.0, **attributes) -> str:
        """Adds a toxic (latency, bandwidth, reset_peer, timeout, slicer, slow_close, limit_data)
        to the proxy in front of `upstream`; applies to its open connections too."""
        name = f"{kind}-{stream}-{random.randrange(1 << 30)}"
        body = {"name": name, "type": kind, "stream": stream, "toxicity": toxicity, "attributes": attributes}
        self._api("POST", f"/proxies/{self.proxies[upstream]}/toxics", body)
        return name

    def clear_toxics(self) -> None:
        """Removes every toxic, and enables every proxy (toxiproxy's reset)."""
        if self.api:
            self._api("POST", "/reset")

    def enable(self, upstream: str, enabled: bool) -> None:
        """A disabled proxy closes its connections and refuses new ones."""
        self._api("POST", f"/proxies/{self.proxies[upstream]}", {"enabled": enabled})

    def _api(self, method: str, path: str, body: dict | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.api + path, data=data, method=method)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                raw = r.read()
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"toxiproxy {method} {path}: HTTP {e.code}: {e.read()[:300]!r}") from None
        try:
            return json.loads(raw)
        except ValueError:  # /version answers plain text
            return {}


def _teardown(spec: dict) -> None:
    """Kills the given processes and whatever still runs in the namespaces, removes them and the
    bridge (the veths go with their namespaces). Idempotent."""
    for pid in spec.get("pids", []):
        terminate(pid, grace=2)
    for ns in spec["namespaces"]:
        pids = _ip("netns", "pids", ns, check=False).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        _ip("netns", "delete", ns, check=False)
    # A deleted namespace goes (with its end of each veth) once the kernel gets to it: the root's
    # ends are removed now.
    for line in _ip("-br", "link", "show", check=False).stdout.splitlines():
        name = line.split()[0].split("@")[0] if line.strip() else ""
        if name.startswith(spec["bridge"]):
            _ip("link", "delete", name, check=False)


def clean() -> None:
    """Removes namespaces and bridges that a killed run left (every name starting with PREFIX)."""
    namespaces = [line.split()[0] for line in _ip("netns", "list").stdout.splitlines() if line.startswith(PREFIX)]
    bridges = [
        line.split()[0]
        for line in _ip("-br", "link", "show", "type", "bridge").stdout.splitlines()
        if line.startswith(PREFIX)
    ]
    for bridge in bridges:
        _teardown({"namespaces": [n for n in namespaces if n.startswith(bridge + "-")], "bridge": bridge})
    for ns in namespaces:
        _ip("netns", "delete", ns, check=False)


def main(argv: list[str]) -> None:
    if argv[:1] == ["watchdog"]:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        sys.stdin.read()  # EOF: the owner stopped the network, or exited
        _teardown(json.loads(argv[1]))
    elif argv[:1] == ["clean"]:
        clean()
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
