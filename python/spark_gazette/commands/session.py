"""The SparkSession a command runs on: local, one core, no UI, the connector's jar, and a JVM
that writes only errors to stderr.

Spark's launcher starts every driver with the JDK's incubating Vector API module, and the JDK
then prints `WARNING: Using incubator modules: jdk.incubator.vector` to stderr before any logging
is set up; no JVM option turns it off. So the JVM is started through pyspark's gateway launcher
with its stderr piped, and everything else it writes there is passed on. A JVM that exits before
it starts (a setting it refuses, no memory) is a `JvmStartError` with what it said.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NOTICE = "WARNING: Using incubator modules: jdk.incubator.vector"
LOG4J2 = "log4j2.properties"


def local_session(app: str, conf: Mapping[str, str]) -> tuple[SparkSession, bool]:
    """A local session named `app` with the connector, `conf` set on it (Hadoop credentials as
    `spark.hadoop.fs.s3a.access.key`, more jars as `spark.jars.packages`, ...), and whether it was
    started here: a command run inside a process with a session of its own uses that one, and
    leaves it running."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    from spark_gazette.configure import configure_spark_with_gazette

    log4j = (Path(str(resources.files("spark_gazette.commands"))) / LOG4J2).as_uri()
    builder: Any = (
        SparkSession.builder.master("local[1]")
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log4j}")
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    builder = configure_spark_with_gazette(builder)
    started = SparkContext._active_spark_context is None
    if started:
        spark_conf = SparkConf(loadDefaults=False)
        for key, value in builder._options.items():
            spark_conf.set(key, value)
        read_end, write_end = os.pipe()
        stderr = _Stderr(os.fdopen(read_end, "rb"))
        try:
            gateway = launch_gateway(spark_conf, popen_kwargs={"stderr": write_end})
        except Exception as e:  # noqa: BLE001 - pyspark says only that the JVM exited; it said why
            os.close(write_end)
            raise JvmStartError(stderr.said() or str(e)) from None
        os.close(write_end)
        stderr.forward()
        SparkContext(conf=spark_conf, gateway=gateway)
    return builder.getOrCreate(), started


class JvmStartError(RuntimeError):
    """The command's JVM exited before it could start: what it said, on one line."""


class _Stderr:
    """The JVM's stderr, read from its start: held until the JVM is known to have started (then
    passed on, but for the notice, as it comes), kept for the error if it exits first."""

    def __init__(self, stream) -> None:
        self._held: list[bytes] = []
        self._passing = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, args=(stream,), name="jvm-stderr", daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in iter(stream.readline, b""):
            if line.rstrip(b"\r\n").decode(errors="replace") == NOTICE:
                continue
            with self._lock:
                if not self._passing:
                    self._held.append(line)
                    continue
            _write(line)

    def forward(self) -> None:
        with self._lock:
            for line in self._held:
                _write(line)
            self._held.clear()
            self._passing = True

    def said(self, wait_s: float = 10.0) -> str:
        """What the JVM wrote before it exited, its lines joined by `; `."""
        self._thread.join(wait_s)
        with self._lock:
            lines = [b.decode(errors="replace").strip() for b in self._held]
        return "; ".join(line for line in lines if line)


def _write(line: bytes) -> None:
    sys.stderr.buffer.write(line)
    sys.stderr.buffer.flush()


def jvm_message(error: BaseException) -> str | None:
    """The message of the JVM exception behind `error` (pyspark's converted exceptions and py4j's
    alike), `[CONDITION] text` for the connector's errors; None for an error of Python's own."""
    origin = getattr(error, "_origin", None) or getattr(error, "java_exception", None)
    return None if origin is None else str(origin.getMessage())
