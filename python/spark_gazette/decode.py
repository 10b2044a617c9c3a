"""Decoding the `value` column of messages."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

_MODES = ("FAILFAST", "PERMISSIVE")
_ENGINES = ("auto", "jvm", "python", "spark", "sql")


def parse_json(df: DataFrame, schema: StructType | str, column: str = "value", into: str = "message") -> DataFrame:
    """Adds column `into` holding the ndjson `value` parsed with `schema` (a StructType or DDL)."""
    from pyspark.sql.functions import col, from_json

    return df.withColumn(into, from_json(col(column).cast("string"), schema))


def parse_protobuf(
    df: DataFrame,
    message_name: str,
    descriptor_file: str,
    column: str = "value",
    into: str = "message",
    engine: str = "auto",
    mode: str = "FAILFAST",
) -> DataFrame:
    """Adds column `into` holding the protobuf `value` (of `application/x-protobuf-fixed`
    journals) decoded as `message_name` (e.g. "demo.Event"), described by a descriptor set file
    (`protoc --include_imports --descriptor_set_out=event.desc event.proto`).

        events = parse_protobuf(read_stream(spark, broker=b, selector="prefix=events/"),
                                "demo.Event", "/path/event.desc")
        events.select("journal", "message.user", "message.amount")

    Types: integers, floats, bools, strings and bytes as in Spark's `from_protobuf`; unsigned
    32-bit integers as long and unsigned 64-bit ones as decimal(20,0), so none wraps around;
    enums as their value names; maps as maps; `google.protobuf.Timestamp` as timestamp and
    `Duration` as a day-time interval. An unset field that tracks presence (a message, an
    `optional`, a oneof member) is null; other unset fields have their default value.

    mode: "FAILFAST" fails the query on a payload that does not parse, naming the message's
    journal and offset (taken from the source's `journal` and `begin` columns when `df` has
    them); "PERMISSIVE" makes it null.

    engine:
      "auto"   "jvm" on a classic session, "python" under Spark Connect.
      "jvm"    the connector's decoder, in the executors' JVMs; needs nothing beyond the connector
               jar; the file is read on the driver through Hadoop (local, HDFS, object stores).
      "python" a Python UDF giving the same schema and values; the file is read here, and the
               workers need the `protobuf` package.
      "sql"    the connector's decoder called by name, `gazette_from_protobuf`: works under Spark Connect
               when the server starts with spark.sql.extensions=io.sparkgazette.spark.GazetteExtensions;
               the file is read by the server's driver.
      "spark"  Spark's own `from_protobuf` with its own type mapping and options; it needs the
               spark-protobuf package on the session
               (`org.apache.spark:spark-protobuf_2.13:<spark version>`).
    """
    from pyspark.sql.functions import col, lit

    if engine not in _ENGINES:
        raise ValueError(f"engine must be one of {', '.join(_ENGINES)}, not {engine!r}")
    if not isinstance(mode, str) or mode.upper() not in _MODES:
        raise ValueError(f"mode must be FAILFAST or PERMISSIVE, not {mode!r}")
    mode = mode.upper()
    if engine == "spark":
        from pyspark.sql.protobuf.functions import from_protobuf

        return df.withColumn(
            into, from_protobuf(col(column), message_name, descFilePath=descriptor_file, options={"mode": mode})
        )

    spark = df.sparkSession
    classic = getattr(spark, "_jvm", None) is not None
    if engine == "auto":
        engine = "jvm" if classic else "python"
    names = set(df.columns)
    journal = col("journal") if "journal" in names else lit(None).cast("string")
    begin = col("begin") if "begin" in names else lit(None).cast("long")

    if engine == "sql":
        from pyspark.sql.functions import call_function

        return df.withColumn(
            into,
            call_function(
                "gazette_from_protobuf", col(column), lit(message_name), lit(descriptor_file), lit(mode), journal, begin
            ),
        )

    if engine == "jvm":
        if not classic:
            raise RuntimeError(
                'parse_protobuf(engine="jvm") needs a classic SparkSession (it registers the decoder '
                'through py4j); under Spark Connect use engine="python"'
            )
        key = f"{message_name}\0{descriptor_file}\0{mode}".encode()
        function = "gazette_protobuf_" + hashlib.sha1(key).hexdigest()[:16]
        spark._jvm.io.sparkgazette.spark.protobuf.ProtobufFunctions.register(
            spark._jsparkSession, function, message_name, descriptor_file, mode
        )
        from pyspark.sql.functions import call_function

        return df.withColumn(into, call_function(function, col(column), journal, begin))

    from pyspark import cloudpickle
    from pyspark.sql.functions import udf

    from spark_gazette import protobuf_rows

    # Shipped with the UDF, so that workers need the protobuf package but not this one.
    cloudpickle.register_pickle_by_value(protobuf_rows)
    with open(descriptor_file, "rb") as f:
        raw = f.read()
    d = protobuf_rows.message_descriptor(raw, message_name, descriptor_file)
    full_name, schema = d.full_name, protobuf_rows.schema_of(d)
    permissive = mode == "PERMISSIVE"
    worker = {}  # built once per worker process: descriptors do not pickle

    def decode(value, journal, begin):
        if value is None:
            return None
        if not worker:
            from google.protobuf import message_factory

            d = protobuf_rows.message_descriptor(raw, message_name, descriptor_file)
            worker.update(cls=message_factory.GetMessageClass(d), convert=protobuf_rows.row_converter(d))
        try:
            m = worker["cls"].FromString(bytes(value))
        except Exception as e:  # DecodeError, or a missing proto2 required field
            if permissive:
                return None
            raise ValueError(
                f"Message at offset {'?' if begin is None else begin} of journal "
                f"{'?' if journal is None else journal} is not a valid {full_name}: {e}. "
                "Use mode 'PERMISSIVE' to decode it as null."
            ) from None
        return worker["convert"](m)

    return df.withColumn(into, udf(decode, schema)(col(column), journal, begin))
