"""The local cluster harness itself: start, use, stop, and never leave processes behind."""

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from cluster import LocalCluster, State, alive
from conftest import requires_local_binaries

ROOT = Path(__file__).resolve().parents[2]
HARNESS = [sys.executable, str(ROOT / "tests" / "harness" / "cluster.py")]
SPECS = (ROOT / "tests" / "specs" / "examples.yaml").read_text()

pytestmark = requires_local_binaries


def http(url: str, data: bytes | None = None) -> bytes:
    req = urllib.request.Request(url, data=data, method="PUT" if data is not None else "GET")
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read()


def wait_until(cond, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def test_cluster_serves_applied_journals_and_stops_cleanly():
    with LocalCluster(brokers=1) as cluster:
        cluster.apply(SPECS)
        names = sorted(j["spec"]["name"] for j in cluster.journals())
        assert names == ["examples/events-part-000", "examples/events-part-001"]
        journal = f"{cluster.broker}/examples/events-part-000"
        http(journal, b'{"n":1}\n{"n":2}\n')
        assert http(journal + "?offset=0") == b'{"n":1}\n{"n":2}\n'
        pids = [cluster.state.etcd_pid] + [b.pid for b in cluster.state.brokers]
        root = cluster.state.root
    assert not any(alive(p) for p in pids)
    assert not os.path.exists(root)


def test_three_brokers_share_one_fragment_store_and_restart_in_place():
    with LocalCluster(brokers=3) as cluster:
        assert len({b.port for b in cluster.state.brokers}) == 3
        cluster.stop_broker(2)
        assert not alive(cluster.state.brokers[2].pid)
        cluster.start_broker(2)
        assert alive(cluster.state.brokers[2].pid)
        assert http(cluster.state.brokers[2].endpoint + "/debug/ready") is not None


def test_a_failed_start_leaves_nothing_running(monkeypatch):
    cluster = LocalCluster(brokers=1)
    monkeypatch.setattr(cluster, "gazette_bin", "/bin/false")
    with pytest.raises(RuntimeError, match="broker 0"):
        cluster.start()
    assert not alive(cluster.state.etcd_pid)


def test_cli_up_writes_env_and_down_stops_everything(tmp_path):
    out = subprocess.run(
        HARNESS + ["--dir", str(tmp_path), "up", "--specs", str(ROOT / "tests/specs/examples.yaml")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    env = dict(line.split("=", 1) for line in (tmp_path / "env").read_text().splitlines())
    assert out.startswith("GAZETTE_BROKER=http://127.0.0.1:")
    assert env["GAZETTE_BROKER"].startswith("http://127.0.0.1:")
    http(env["GAZETTE_BROKER"] + "/examples/events-part-001", b"x\n")
    state = State.load(tmp_path / "state.json")
    subprocess.run(HARNESS + ["--dir", str(tmp_path), "down"], check=True)
    assert not alive(state.etcd_pid) and not any(alive(b.pid) for b in state.brokers)
    assert not (tmp_path / "env").exists()


def test_cli_cluster_dies_with_its_owner(tmp_path):
    owner = subprocess.Popen(["sleep", "600"])
    try:
        subprocess.run(
            HARNESS + ["--dir", str(tmp_path), "up", "--owner-pid", str(owner.pid)], capture_output=True, check=True
        )
        state = State.load(tmp_path / "state.json")
        assert alive(state.brokers[0].pid)
    finally:
        owner.kill()
        owner.wait()
    assert wait_until(lambda: not alive(state.brokers[0].pid) and not alive(state.etcd_pid))
