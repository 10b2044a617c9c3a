"""A Spark standalone cluster on loopback: a master and N workers, as processes of the installed
pyspark, each worker on its own loopback address (127.0.0.2, 127.0.0.3, ...) so that Spark sees
them as different hosts (it never runs a speculative copy of a task on the host of its first
attempt). Temporary directories; always stopped.

    with SparkStandalone(workers=2) as cluster:
        SparkSession.builder.master(cluster.master) ...
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from cluster import free_port, terminate


def spark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


class SparkStandalone:
    def __init__(self, workers: int = 2, cores: int = 1, memory: str = "1g", network=None, party: str = "spark"):
        """`network` (harness/network.py): the master and workers (so their executors) run in
        `party`'s namespace, the master on its address, the workers on that namespace's loopback."""
        self.workers, self.cores, self.memory = workers, cores, memory
        self.prefix = network.prefix(party) if network else []
        self.host = network.address(party) if network else "127.0.0.1"
        self.root = tempfile.mkdtemp(prefix="spark-standalone-")
        self.port, self.ui_port = free_port(), free_port()
        self.pids: list[int] = []

    @property
    def master(self) -> str:
        return f"spark://{self.host}:{self.port}"

    def start(self) -> SparkStandalone:
        try:
            self._spawn(
                "master",
                "org.apache.spark.deploy.master.Master",
                "--host",
                self.host,
                "--port",
                str(self.port),
                "--webui-port",
                str(self.ui_port),
            )
            self._wait(lambda: self._status() is not None, "the master")
            for i in range(self.workers):
                host = f"127.0.0.{i + 2}"
                work = Path(self.root, f"worker-{i}")
                work.mkdir()
                self._spawn(
                    f"worker-{i}",
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    host,
                    "--port",
                    "0",
                    "--webui-port",
                    str(free_port()),
                    "--cores",
                    str(self.cores),
                    "--memory",
                    self.memory,
                    "--work-dir",
                    str(work),
                    self.master,
                )
            self._wait(
                lambda: (
                    len([w for w in (self._status() or {}).get("workers", []) if w.get("state") == "ALIVE"])
                    == self.workers
                ),
                f"{self.workers} workers",
            )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for pid in reversed(self.pids):
            terminate(pid)
            try:  # executors a worker started, should it not have stopped them itself
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        self.pids = []
        shutil.rmtree(self.root, ignore_errors=True)

    def executor_pids(self) -> list[int]:
        """The executor JVMs the workers run now (they share a worker's process group)."""
        workers, found = set(self.pids[1:]), []
        for entry in os.listdir("/proc"):
            try:
                if entry.isdigit() and os.getpgid(int(entry)) in workers and int(entry) not in workers:
                    with open(f"/proc/{entry}/cmdline", "rb") as f:
                        if b"CoarseGrainedExecutorBackend" in f.read():
                            found.append(int(entry))
            except OSError:
                pass
        return sorted(found)

    def __enter__(self) -> SparkStandalone:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _spawn(self, name: str, main: str, *args: str) -> None:
        env = dict(
            os.environ,
            SPARK_HOME=spark_home(),
            SPARK_LOG_DIR=self.root,
            SPARK_LOCAL_DIRS=self.root,
            SPARK_NO_DAEMONIZE="1",
        )
        log = open(Path(self.root, f"{name}.log"), "wb")
        proc = subprocess.Popen(
            [*self.prefix, os.path.join(spark_home(), "bin", "spark-class"), main, *args],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.pids.append(proc.pid)

    def _status(self) -> dict | None:
        try:
            with urllib.request.urlopen(f"http://{self.host}:{self.ui_port}/json/", timeout=2) as r:
                return json.loads(r.read())
        except (OSError, ValueError):  # a master still starting answers /json/ with its HTML page
            return None

    def _wait(self, ready, what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            time.sleep(0.2)
        logs = "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}" for p in Path(self.root).glob("*.log")
        )
        raise TimeoutError(f"Spark standalone: {what} did not come up within {timeout:.0f}s\n{logs}")
