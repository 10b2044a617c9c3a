"""A SparkSession whose JVM keeps the JDK's start-up notice to itself.

Spark's launcher starts every driver with the JDK's incubating Vector API module
(`--add-modules=jdk.incubator.vector`), and the JDK then prints
`WARNING: Using incubator modules: jdk.incubator.vector` to stderr before any logging is set
up; no JVM option turns it off. Starting the JVM through pyspark's own gateway launcher with
its stderr piped lets the demo pass on everything else the JVM writes there, without that line.
"""

from __future__ import annotations

import sys
import threading

NOTICE = "WARNING: Using incubator modules: jdk.incubator.vector"


def _forward(stream) -> None:
    for line in iter(stream.readline, b""):
        if line.rstrip(b"\r\n").decode(errors="replace") != NOTICE:
            sys.stderr.buffer.write(line)
            sys.stderr.buffer.flush()


def get_or_create(builder):
    """The builder's session, its JVM started here with the notice dropped from its stderr."""
    from subprocess import PIPE

    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._active_spark_context is None:
        conf = SparkConf(loadDefaults=False)
        for key, value in builder._options.items():
            conf.set(key, value)
        gateway = launch_gateway(conf, popen_kwargs={"stderr": PIPE})
        threading.Thread(target=_forward, args=(gateway.proc.stderr,), name="jvm-stderr", daemon=True).start()
        SparkContext(conf=conf, gateway=gateway)
    return builder.getOrCreate()
