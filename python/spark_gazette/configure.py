"""Adding the connector to a SparkSession builder."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import TypeVar

from spark_gazette._version import VERSION
from spark_gazette.connector import (
    MAVEN_COORDINATES,
    ConnectorNotFoundError,
    connect_client_message,
    has_connector,
    running_session_message,
)

Builder = TypeVar("Builder")


def bundled_jar() -> str | None:
    """The jar this package carries, or None when it carries none (a source checkout)."""
    jar = Path(str(resources.files("spark_gazette"))) / "jars" / f"spark-gazette-assembly-{VERSION}.jar"
    return str(jar) if jar.is_file() else None


def jar_path() -> str:
    """The connector's assembly jar bundled in this package."""
    jar = bundled_jar()
    if jar is None:
        raise FileNotFoundError(
            f"spark_gazette {VERSION} has no bundled connector jar (spark-gazette-assembly-{VERSION}.jar): install "
            "the wheel that `make dist` builds, or pass use_maven=True to resolve " + MAVEN_COORDINATES
        )
    return jar


def configure_spark_with_gazette(builder: Builder, use_maven: bool = False) -> Builder:
    """Adds the Gazette connector to a SparkSession builder and returns the builder.

    By default the jar bundled in this package is added to `spark.jars`; with `use_maven=True`
    the connector's Maven coordinates go to `spark.jars.packages` instead (resolved by Spark
    from the local Maven repository or a remote one). Jars or packages already configured are
    kept.

        spark = configure_spark_with_gazette(SparkSession.builder.master("local[2]")).getOrCreate()

    Raises ConnectorNotFoundError where the jar cannot be added: a Spark Connect client of a
    remote server, or a process whose running session lacks the connector.
    """
    options = getattr(builder, "_options", {})
    remote = options.get("spark.remote") or os.environ.get("SPARK_REMOTE")
    if remote and not str(remote).startswith("local"):
        raise ConnectorNotFoundError(connect_client_message(str(remote)))
    _refuse_running_session_without_connector()
    key, value = ("spark.jars.packages", MAVEN_COORDINATES) if use_maven else ("spark.jars", jar_path())
    existing = options.get(key)
    return builder.config(key, f"{existing},{value}" if existing else value)  # type: ignore[attr-defined]


def _refuse_running_session_without_connector() -> None:
    """getOrCreate() would return the running session and drop spark.jars: say so now."""
    try:
        from pyspark import SparkContext
        from pyspark.sql import SparkSession
    except ImportError:
        return
    sc = SparkContext._active_spark_context
    if sc is None:
        return
    spark = SparkSession.getActiveSession() or SparkSession(sc)
    if not has_connector(spark):
        raise ConnectorNotFoundError(running_session_message(sc.appName))
