"""Reading and writing journals: thin helpers that only set the connector's string options.

Each keyword is the connector's option of the same name in snake_case (`starting_offsets` is
`startingOffsets`); `docs/options.md` documents every option once, with its default. The
helpers convert Python values (bools, aware datetimes, timedeltas, dicts, lists of journals)
to the option strings and check nothing themselves: the connector checks every value when the
DataFrame is loaded, and its error names the option (`getCondition()` is
GAZETTE_INVALID_OPTION, GAZETTE_MISSING_OPTION, GAZETTE_CONFLICTING_OPTIONS, ...).

    events = read_stream(spark, broker="http://127.0.0.1:8080", selector="prefix=events/",
                         starting_offsets="earliest", max_bytes_per_trigger=64 << 20)
    query = write_stream(events.selectExpr("journal AS src", "begin"), broker="http://127.0.0.1:8080",
                         selector="prefix=copies/", checkpoint_location="/tmp/ckpt").start()
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from spark_gazette import options as _options
from spark_gazette.connector import explained

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, DataFrameReader, SparkSession
    from pyspark.sql.streaming import DataStreamReader, DataStreamWriter
    from pyspark.sql.types import StructType

Offsets = str | Mapping[str, int]
"""'earliest', 'latest', or offsets by journal name (-2 earliest, -1 latest)."""
Timestamp = int | datetime
"""Milliseconds since 1970-01-01T00:00:00Z, or a timezone-aware datetime."""
Duration = str | int | timedelta
"""'250ms', '30s', '15m', '24h', '7d', milliseconds, or a timedelta (sent in milliseconds)."""


def read_stream(
    spark: SparkSession,
    broker: str,
    selector: str | None = None,
    journals: str | Sequence[str] | None = None,
    starting_offsets: Offsets | None = None,
    starting_timestamp: Timestamp | None = None,
    starting_offsets_by_timestamp: Mapping[str, Timestamp] | None = None,
    starting_offsets_by_timestamp_strategy: str | None = None,
    max_bytes_per_trigger: int | None = None,
    min_bytes_per_trigger: int | None = None,
    max_trigger_delay: Duration | None = None,
    read_committed: bool | None = None,
    fail_on_data_loss: bool | None = None,
    fail_on_malformed: bool | None = None,
    uuid_pointer: str | None = None,
    uuid_field: int | None = None,
    producer_prune_horizon: Duration | None = None,
    include_labels: bool | None = None,
    sequencer_ring_size: int | None = None,
    sequencer_ring_bytes: int | None = None,
    bytes_per_partition: int | None = None,
    min_partitions: int | None = None,
    split_committed: bool | None = None,
    real_time_partitions: int | None = None,
    rpc_timeout: Duration | None = None,
    retry_timeout: Duration | None = None,
    trusted_ca_file: str | None = None,
    cert_file: str | None = None,
    cert_key_file: str | None = None,
    auth_token: str | None = None,
    fragment_root: str | None = None,
    direct_fragment_reads: bool | None = None,
    schema: str | StructType | None = None,
    parse_options: Mapping[str, object] | None = None,
    protobuf_message: str | None = None,
    protobuf_descriptor_file: str | None = None,
) -> DataFrame:
    """A streaming DataFrame of the journals' messages, one row per message:
    `journal, begin, end, value, uuid, producer, clock, publishTime` (+ `labels`).

    With `schema`, each row is instead the message parsed into the schema's fields, in the scan,
    with the connector's columns in the struct `_gazette`; `parse_options` are Spark's parsing
    options by their Spark names (`{"timestampFormat": "dd/MM/yyyy HH:mm"}`). Protobuf messages
    are decoded as `protobuf_message` of `protobuf_descriptor_file` (a descriptor set the driver
    reads), which types the rows without a schema.

    Give `selector` (e.g. "prefix=events/") or `journals` (names). `starting_offsets` is
    "earliest", "latest" (the default) or a dict of journal offsets; `starting_timestamp` (or
    `starting_offsets_by_timestamp`, per journal) starts instead at the first message published at
    or after a time, found once when the query starts. Read committed (the default),
    every acknowledged message appears exactly once; rolled-back and duplicate ones never.

        events = read_stream(spark, broker="http://127.0.0.1:8080", selector="prefix=events/",
                             starting_offsets="earliest", max_bytes_per_trigger=64 << 20)

    In real-time mode (`.trigger(realTime="1 minute")` on the writer, pyspark 4.2 and newer),
    `real_time_partitions` tasks read the journals, each holding a task slot for the whole batch;
    see `spark_gazette.real_time`.
    """
    opts = _options.build(_options.SOURCE, _without(locals(), "spark", "schema", "parse_options"))
    return _loaded(_typed(spark.readStream.format("gazette").options(**opts), schema, parse_options))


def read(
    spark: SparkSession,
    broker: str,
    selector: str | None = None,
    journals: str | Sequence[str] | None = None,
    starting_offsets: Offsets | None = None,
    ending_offsets: Offsets | None = None,
    starting_timestamp: Timestamp | None = None,
    starting_offsets_by_timestamp: Mapping[str, Timestamp] | None = None,
    starting_offsets_by_timestamp_strategy: str | None = None,
    ending_timestamp: Timestamp | None = None,
    ending_offsets_by_timestamp: Mapping[str, Timestamp] | None = None,
    read_committed: bool | None = None,
    fail_on_malformed: bool | None = None,
    uuid_pointer: str | None = None,
    uuid_field: int | None = None,
    include_labels: bool | None = None,
    bytes_per_partition: int | None = None,
    min_partitions: int | None = None,
    split_committed: bool | None = None,
    rpc_timeout: Duration | None = None,
    retry_timeout: Duration | None = None,
    trusted_ca_file: str | None = None,
    cert_file: str | None = None,
    cert_key_file: str | None = None,
    auth_token: str | None = None,
    fragment_root: str | None = None,
    direct_fragment_reads: bool | None = None,
    schema: str | StructType | None = None,
    parse_options: Mapping[str, object] | None = None,
    protobuf_message: str | None = None,
    protobuf_descriptor_file: str | None = None,
) -> DataFrame:
    """A batch DataFrame of the journals' messages between `starting_offsets` (default
    "earliest") and `ending_offsets` (default "latest"), or between the first messages published
    at or after `starting_timestamp` and `ending_timestamp`; same columns as `read_stream`.

        from datetime import datetime, timezone
        today = read(spark, broker="http://127.0.0.1:8080", selector="prefix=events/",
                     starting_timestamp=datetime(2026, 1, 1, tzinfo=timezone.utc))
    """
    opts = _options.build(_options.SOURCE, _without(locals(), "spark", "schema", "parse_options"))
    return _loaded(_typed(spark.read.format("gazette").options(**opts), schema, parse_options))


def write_stream(
    df: DataFrame,
    broker: str,
    journal: str | None = None,
    selector: str | None = None,
    checkpoint_location: str | None = None,
    mapping: str | None = None,
    delivery_guarantee: str | None = None,
    uuid_pointer: str | None = None,
    uuid_field: int | None = None,
    flush_bytes: int | None = None,
    rpc_timeout: Duration | None = None,
    retry_timeout: Duration | None = None,
    trusted_ca_file: str | None = None,
    cert_file: str | None = None,
    cert_key_file: str | None = None,
    auth_token: str | None = None,
    reader_ring_size: int | None = None,
) -> DataStreamWriter:
    """A DataStreamWriter that appends `df` to `journal`, or to the journals of `selector`
    (rows mapped by their `key` column, or their own `journal` column), exactly once.

    `df` has a `value` column (string or binary) and optionally `journal` and `key`; without
    `value`, rows are written as JSON objects of all their columns. Exactly-once streams need
    `checkpoint_location` (Spark does not show the session-wide
    spark.sql.streaming.checkpointLocation to sinks). Call `.start()` on the result.

        write_stream(rollups, broker=b, selector="prefix=rollups/", checkpoint_location="/ckpt").start()

    In real-time mode (`.outputMode("update").trigger(realTime="1 minute")`, after
    `configure_real_time(spark)`), rows that carry their input's `origin` column
    (`spark_gazette.origin`) are written exactly once, each visible as soon as it is written:

        copies = events.select(origin(events), to_json(struct("user", "amount")).alias("value"))
        (write_stream(copies, broker=b, journal="copies/all", checkpoint_location="/ckpt")
            .outputMode("update").trigger(realTime="1 minute").start())
    """
    opts = _options.build(_options.SINK, _without(locals(), "df"))
    _loaded(df.sparkSession.read.format("gazette").options(**opts))
    return df.writeStream.format("gazette").options(**opts)


def write(
    df: DataFrame,
    broker: str,
    journal: str | None = None,
    selector: str | None = None,
    checkpoint_location: str | None = None,
    mapping: str | None = None,
    delivery_guarantee: str | None = None,
    uuid_pointer: str | None = None,
    uuid_field: int | None = None,
    flush_bytes: int | None = None,
    rpc_timeout: Duration | None = None,
    retry_timeout: Duration | None = None,
    trusted_ca_file: str | None = None,
    cert_file: str | None = None,
    cert_key_file: str | None = None,
    auth_token: str | None = None,
    batch_id: str | None = None,
    reader_ring_size: int | None = None,
    staging_location: str | None = None,
) -> None:
    """Appends the batch DataFrame `df` exactly once: its messages become visible when the job
    commits, one ACK per journal, appended journal by journal; tasks' large runs are staged and
    appended after the ACKs, one append each (without `batch_id`, under `staging_location`,
    else `checkpoint_location`, else where docs/sink.md says).

    Journals are not committed together: a job whose commit fails part-way can leave some of
    the rows visible and the others not. With `batch_id` (and `checkpoint_location`) the job is
    recorded under that id first, and running it again with the same id, after a failure or
    not, completes it without writing any row twice. Without `batch_id` every call is a new
    write.

        write(daily, broker="http://127.0.0.1:8080", journal="reports/daily",
              checkpoint_location="/ckpt/reports", batch_id="day-2026-01-01")
    """
    opts = _options.build(_options.SINK, _without(locals(), "df"))
    with explained():
        df.write.format("gazette").options(**opts).mode("append").save()


def _typed(
    reader: DataFrameReader | DataStreamReader,
    schema: str | StructType | None,
    parse_options: Mapping[str, object] | None,
) -> DataFrameReader | DataStreamReader:
    """The reader with the schema its rows are parsed into, and Spark's parsing options."""
    if parse_options:
        reader = reader.options(**{k: _options.wire(k, v) for k, v in parse_options.items()})
    return reader if schema is None else reader.schema(schema)


def _loaded(reader: DataFrameReader | DataStreamReader) -> DataFrame:
    """The loaded DataFrame, analyzed now, also under Spark Connect: the connector checks the
    options where they are given, and a session without it says what to do."""
    with explained():
        df = reader.load()
        _ = df.schema  # analysis, which Spark Connect defers until a DataFrame is used
    return df


def _without(args: dict[str, object], *names: str) -> dict[str, object]:
    return {k: v for k, v in args.items() if k not in names}
