"""Gazette journals in PySpark, exactly once.

    from pyspark.sql import SparkSession
    from spark_gazette import configure_spark_with_gazette, read_stream, write_stream

    spark = configure_spark_with_gazette(SparkSession.builder.appName("app")).getOrCreate()
    events = read_stream(spark, broker="http://127.0.0.1:8080", selector="prefix=events/")
    query = write_stream(events.selectExpr("journal AS src", "begin"), broker="http://127.0.0.1:8080",
                         selector="prefix=copies/", checkpoint_location="/tmp/ckpt").start()

`read_stream`, `read`, `write_stream` and `write` only set string options, so they work on
classic sessions and Spark Connect alike; the admin helpers in `spark_gazette.admin` need a
classic session. For real-time mode (`trigger(realTime=...)`), `configure_real_time` sets the
session up and `origin` is the column that makes the sink exactly once there.

`python -m spark_gazette lag --checkpoint <dir> --broker <url>` prints where a streaming query,
running or stopped, stands in each journal it reads: its committed offsets, the write heads and
the bytes between them (`spark_gazette.admin.lag` returns the same as a dict);
`python -m spark_gazette --help` lists the commands.
"""

from spark_gazette._version import VERSION as __version__
from spark_gazette.configure import configure_spark_with_gazette, jar_path
from spark_gazette.connector import MAVEN_COORDINATES, ConnectorNotFoundError
from spark_gazette.decode import parse_json, parse_protobuf
from spark_gazette.helpers import read, read_stream, write, write_stream
from spark_gazette.real_time import configure_real_time, origin
from spark_gazette.spark_line import UnsupportedSparkError

__all__ = [
    "MAVEN_COORDINATES",
    "ConnectorNotFoundError",
    "UnsupportedSparkError",
    "configure_real_time",
    "configure_spark_with_gazette",
    "jar_path",
    "origin",
    "parse_json",
    "parse_protobuf",
    "read",
    "read_stream",
    "write",
    "write_stream",
    "__version__",
]
