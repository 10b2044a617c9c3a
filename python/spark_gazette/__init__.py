"""Gazette journals in PySpark, exactly once.

    from pyspark.sql import SparkSession
    from spark_gazette import configure_spark_with_gazette, read_stream, write_stream

    spark = configure_spark_with_gazette(SparkSession.builder.appName("app")).getOrCreate()
    events = read_stream(spark, broker="http://127.0.0.1:8080", selector="prefix=events/")
    query = write_stream(events.selectExpr("journal AS src", "begin"), broker="http://127.0.0.1:8080",
                         selector="prefix=copies/", checkpoint_location="/tmp/ckpt").start()

`read_stream`, `read`, `write_stream` and `write` only set string options, so they work on
classic sessions and Spark Connect alike; the admin helpers in `spark_gazette.admin` need a
classic session.
"""

from spark_gazette.configure import configure_spark_with_gazette, jar_path
from spark_gazette.connector import MAVEN_COORDINATES, ConnectorNotFoundError
from spark_gazette.decode import parse_json, parse_protobuf
from spark_gazette.streams import read, read_stream, write, write_stream

__all__ = [
    "MAVEN_COORDINATES",
    "ConnectorNotFoundError",
    "configure_spark_with_gazette",
    "jar_path",
    "parse_json",
    "parse_protobuf",
    "read",
    "read_stream",
    "write",
    "write_stream",
]
