"""Adding the connector to a SparkSession builder."""

from __future__ import annotations

import os
from typing import TypeVar

from spark_gazette.connector import (
    ConnectorNotFoundError,
    connect_client_message,
    has_connector,
    running_session_message,
)
from spark_gazette.spark_line import bundled_jar, installed_line

Builder = TypeVar("Builder")


def jar_path() -> str:
    """The connector's jar bundled in this package for the Spark installed here (its line and Scala)."""
    line = installed_line()
    jar = bundled_jar(line)
    if jar is None:
        raise FileNotFoundError(
            f"this spark_gazette has no bundled connector jar for Spark {line.spark} with Scala {line.scala} "
            f"({line.jar_name}): install the wheel that `make dist` builds, or pass use_maven=True to resolve "
            + line.coordinates
        )
    return jar


def configure_spark_with_gazette(builder: Builder, use_maven: bool = False) -> Builder:
    """Adds the Gazette connector to a SparkSession builder and returns the builder.

    By default the jar bundled in this package for the installed Spark's line (Spark 4.x, or
    Spark 3.5 with Scala 2.12 or 2.13) is added to `spark.jars`; with `use_maven=True` that
    line's Maven coordinates go to `spark.jars.packages` instead (resolved by Spark from the
    local Maven repository or a remote one). Jars or packages already configured are kept.

        spark = configure_spark_with_gazette(SparkSession.builder.master("local[2]")).getOrCreate()

    Raises ConnectorNotFoundError where the jar cannot be added: a Spark Connect client of a
    remote server, or a process whose running session lacks the connector; UnsupportedSparkError
    for a Spark the connector has no build for.
    """
    options = getattr(builder, "_options", {})
    remote = options.get("spark.remote") or os.environ.get("SPARK_REMOTE")
    if remote and not str(remote).startswith("local"):
        raise ConnectorNotFoundError(connect_client_message(str(remote)))
    _refuse_running_session_without_connector()
    key, value = ("spark.jars.packages", installed_line().coordinates) if use_maven else ("spark.jars", jar_path())
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
