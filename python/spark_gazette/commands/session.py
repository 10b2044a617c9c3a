"""The SparkSession a command runs on: local, one core, no UI, the connector's jar, and a JVM
that writes only errors to stderr.

Spark's launcher starts every driver with the JDK's incubating Vector API module, and the JDK
then prints `WARNING: Using incubator modules: jdk.incubator.vector` to stderr before any logging
is set up; no JVM option turns it off. So the JVM is started through pyspark's gateway launcher
with its stderr piped, and everything else it writes there is passed on.
"""

from __future__ import annotations

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
        from subprocess import PIPE

        gateway = launch_gateway(spark_conf, popen_kwargs={"stderr": PIPE})
        threading.Thread(target=_forward, args=(gateway.proc.stderr,), name="jvm-stderr", daemon=True).start()
        SparkContext(conf=spark_conf, gateway=gateway)
    return builder.getOrCreate(), started


def _forward(stream) -> None:
    for line in iter(stream.readline, b""):
        if line.rstrip(b"\r\n").decode(errors="replace") != NOTICE:
            sys.stderr.buffer.write(line)
            sys.stderr.buffer.flush()


def jvm_message(error: BaseException) -> str | None:
    """The message of the JVM exception behind `error` (pyspark's converted exceptions and py4j's
    alike), `[CONDITION] text` for the connector's errors; None for an error of Python's own."""
    origin = getattr(error, "_origin", None) or getattr(error, "java_exception", None)
    return None if origin is None else str(origin.getMessage())
