"""What `read_stream`, `read`, `write_stream` and `write` do once their keywords are options.

The helpers themselves (`spark_gazette.helpers`) are generated from the connector's declaration
of its options when the package is built; each turns its keywords into the connector's string
options (`spark_gazette.options`) and calls one function here. They set only string options, so
they work on classic sessions and Spark Connect alike, and they check no value themselves: the
side that takes the options does, and its error names the option (`getCondition()` is
GAZETTE_INVALID_OPTION, GAZETTE_UNKNOWN_OPTION, GAZETTE_MISSING_OPTION, ...).

    events = read_stream(spark, broker="http://127.0.0.1:8080", selector="prefix=events/",
                         starting_offsets="earliest", max_bytes_per_trigger=64 << 20)
    query = write_stream(events.selectExpr("journal AS src", "begin"), broker="http://127.0.0.1:8080",
                         selector="prefix=copies/", checkpoint_location="/tmp/ckpt").start()
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from spark_gazette import options as _options
from spark_gazette.connector import ConnectorNotFoundError, explained, missing_connector_message
from spark_gazette.real_time import QUERY_OPTIONS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, DataFrameReader, SparkSession
    from pyspark.sql.streaming import DataStreamReader, DataStreamWriter
    from pyspark.sql.types import StructType


def load(
    spark: SparkSession,
    keywords: Mapping[str, object],
    options: Mapping[str, object],
    schema: str | StructType | None,
    parse_options: Mapping[str, object] | None,
    streaming: bool,
) -> DataFrame:
    opts = _options.build(_options.SOURCE, keywords, options)
    parsing = _parsing(parse_options)
    _check(spark, "source", {**opts, **parsing}, streaming=streaming)
    reader = spark.readStream if streaming else spark.read
    return _loaded(_typed(reader.format("gazette").options(**opts), schema, parsing))


def stream_writer(df: DataFrame, keywords: Mapping[str, object], options: Mapping[str, object]) -> DataStreamWriter:
    # Spark's writer options a real-time query needs (asynchronous progress tracking off), for
    # this query alone: Spark's defaults elsewhere, and options given here win.
    opts = {**QUERY_OPTIONS, **_options.build(_options.SINK, keywords, options)}
    _check(df.sparkSession, "sink", opts, streaming=True)
    return df.writeStream.format("gazette").options(**opts)


def save_batch(df: DataFrame, keywords: Mapping[str, object], options: Mapping[str, object], mode: str) -> None:
    # The sink checks its options where the write is planned, in save().
    opts = _options.build(_options.SINK, keywords, options)
    with explained():
        df.write.format("gazette").options(**opts).mode(mode).save()


def given(args: Mapping[str, object], *names: str) -> dict[str, object]:
    """A helper's option keywords as it was called: its arguments but `names` and `**options`."""
    return {k: v for k, v in args.items() if k not in names and k != "options"}


def _check(spark: SparkSession, side: str, opts: Mapping[str, str], streaming: bool) -> None:
    """The options checked now by the side that takes them, as the query will check them when it
    runs, with the session's defaults: a stream's writer reaches the sink only when the query
    starts, and a read with a schema names its side to Spark only when it is planned. This needs
    the session's JVM (a classic session); Spark Connect has no way to the connector before a query
    starts, and there the connector checks them then (a read without a schema, where it is loaded)."""
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return
    check = jvm.io.sparkgazette.spark.OptionsCheck
    if type(check).__name__ == "JavaPackage":  # py4j's name for a class the JVM does not have
        raise ConnectorNotFoundError(missing_connector_message())
    check.check(spark._jsparkSession, side, json.dumps(dict(opts)), streaming)


def _parsing(parse_options: Mapping[str, object] | None) -> dict[str, str]:
    """Spark's parsing options, by Spark's names, as strings."""
    return {k: _options.wire(k, v) for k, v in (parse_options or {}).items()}


def _typed(
    reader: DataFrameReader | DataStreamReader, schema: str | StructType | None, parsing: Mapping[str, str]
) -> DataFrameReader | DataStreamReader:
    """The reader with the schema its rows are parsed into, and Spark's parsing options."""
    reader = reader.options(**parsing) if parsing else reader
    return reader if schema is None else reader.schema(schema)


def _loaded(reader: DataFrameReader | DataStreamReader) -> DataFrame:
    """The loaded DataFrame, analyzed now, also under Spark Connect: the connector checks the
    options where they are given, and a session without it says what to do."""
    with explained():
        df = reader.load()
        _ = df.schema  # analysis, which Spark Connect defers until a DataFrame is used
    return df
