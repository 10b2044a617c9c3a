"""Whether a session has the connector, and what to do when it has not: the failures a new user
meets first, each with the way out (Maven coordinates, cluster library, Connect server flags)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from spark_gazette.spark_line import DEFAULT, UnsupportedSparkError, bundled_jar, installed_line

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _coordinates() -> str:
    try:
        return installed_line().coordinates
    except UnsupportedSparkError:  # configure_spark_with_gazette says so; importing must not fail
        return DEFAULT.coordinates


MAVEN_COORDINATES = _coordinates()
"""The connector's Maven coordinates for the Spark installed here (its line and Scala, e.g.
`io.sparkgazette:spark-gazette-3.5_2.12:<version>` beside pyspark 3.5), for `--packages` and
cluster libraries: the same version as this Python package, whose wheel carries the same jar."""


class ConnectorNotFoundError(RuntimeError):
    """The session has no Gazette connector, and this process cannot add it."""


def _jar_hint() -> str:
    try:
        jar = bundled_jar()
    except UnsupportedSparkError:  # advice about a missing connector must not fail in turn
        jar = None
    return f"--jars {jar}" if jar else f"--packages {MAVEN_COORDINATES}"


def missing_connector_message() -> str:
    return (
        "The Gazette connector is not on this Spark session's classpath (DATA_SOURCE_NOT_FOUND: gazette). "
        "Spark adds a data source's jar only when the session starts:\n"
        "  - PySpark: configure_spark_with_gazette(SparkSession.builder).getOrCreate(), before any other session "
        "starts in the process;\n"
        f"  - spark-submit or pyspark: --packages {MAVEN_COORDINATES};\n"
        "  - a managed cluster: install the Maven library "
        f"{MAVEN_COORDINATES} on the cluster, then restart it;\n"
        f"  - Spark Connect: start the server with start-connect-server.sh {_jar_hint()}."
    )


def running_session_message(app: str) -> str:
    return (
        f"A SparkSession is already running in this process (app '{app}') without the Gazette connector, and "
        "Spark reads spark.jars only when a session starts, so configure_spark_with_gazette cannot add it. Stop "
        "the session first (spark.stop()) and build it again with configure_spark_with_gazette, or start the "
        f"process with --packages {MAVEN_COORDINATES}. Where the platform makes the session for you (a managed "
        f"cluster's notebooks), install the Maven library {MAVEN_COORDINATES} on the cluster instead."
    )


def connect_client_message(remote: str) -> str:
    return (
        f"This builder makes a Spark Connect client ({remote}), and a client cannot add the Gazette connector's "
        "jar to its server: the server loads data sources when it starts. Start the server with "
        f"start-connect-server.sh {_jar_hint()} (or --packages {MAVEN_COORDINATES}), then build the client "
        "session without configure_spark_with_gazette; spark_gazette's read and write helpers work over Connect."
    )


def is_missing_connector(error: BaseException) -> bool:
    text = str(error)
    return "DATA_SOURCE_NOT_FOUND" in text and "gazette" in text


@contextmanager
def explained() -> Iterator[None]:
    """Turns Spark's DATA_SOURCE_NOT_FOUND for `gazette` into a ConnectorNotFoundError saying what to do."""
    try:
        yield
    except Exception as e:  # AnalysisException classic and Connect alike
        if is_missing_connector(e):
            raise ConnectorNotFoundError(missing_connector_message()) from e
        raise


def has_connector(spark: SparkSession) -> bool:
    """Whether `spark` resolves format("gazette"): the connector refuses the empty options, Spark
    without it does not know the name."""
    try:
        _ = spark.read.format("gazette").load().schema  # resolving the source is the question
    except Exception as e:
        return not is_missing_connector(e)
    return True
