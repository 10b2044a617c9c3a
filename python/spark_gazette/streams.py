"""Reading and writing journals: thin helpers that only set the connector's string options.

Each keyword is the connector's option of the same name in snake_case (`starting_offsets` is
`startingOffsets`), keyword-only past `broker`; any option also goes through `**options` by
the connector's name. `docs/options.md` documents every option once, with its default. The
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
from typing import TYPE_CHECKING, Union

from spark_gazette import options as _options
from spark_gazette.connector import explained
from spark_gazette.real_time import QUERY_OPTIONS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, DataFrameReader, SparkSession
    from pyspark.sql.streaming import DataStreamReader, DataStreamWriter
    from pyspark.sql.types import StructType

Offsets = Union[str, Mapping[str, int]]
"""'earliest', 'latest', or offsets by journal name (-2 earliest, -1 latest)."""
Timestamp = Union[int, datetime]
"""Milliseconds since 1970-01-01T00:00:00Z, or a timezone-aware datetime."""
Duration = Union[str, int, timedelta]
"""'250ms', '30s', '15m', '24h', '7d', milliseconds, or a timedelta (sent in milliseconds)."""


def read_stream(
    spark: SparkSession,
    broker: str | None = None,
    *,
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
    auth_token_file: str | None = None,
    auth_token_provider: str | None = None,
    fragment_root: str | None = None,
    direct_fragment_reads: bool | None = None,
    schema: str | StructType | None = None,
    parse_options: Mapping[str, object] | None = None,
    protobuf_message: str | None = None,
    protobuf_descriptor_file: str | None = None,
    **options: object,
) -> DataFrame:
    """A streaming DataFrame of the journals' messages, one row per message.

    Its columns are `journal, begin, end, value, uuid, producer, clock, publishTime` (and
    `labels` with `include_labels`). Read committed (the default), every acknowledged message
    appears exactly once; rolled-back and duplicate ones never.

    Parameters
    ----------
    spark : SparkSession
    broker : str, optional
        A broker's endpoint; else the session's `spark.datasource.gazette.broker`.
    selector, journals : str, optional
        Which journals: a label selector (e.g. "prefix=events/"), or journal names.
    starting_offsets : str or mapping, optional
        "earliest", "latest" (the default) or offsets by journal; `starting_timestamp` (or
        `starting_offsets_by_timestamp`, per journal) starts instead at the first message
        published at or after a time, found once when the query starts.
    max_bytes_per_trigger, read_committed, fail_on_data_loss, ... : optional
        The source's other options by their snake_case names (`docs/options.md` has each once,
        with its default); Python values are converted (aware datetimes, timedeltas, dicts, lists).
    schema : str or StructType, optional
        Each row parsed into this schema's fields, in the scan, with the connector's columns in
        the struct `_gazette`. Protobuf messages are typed by `protobuf_message` of
        `protobuf_descriptor_file` (a descriptor set the driver reads) instead.
    parse_options : mapping, optional
        Spark's parsing options by Spark's names (`{"timestampFormat": "dd/MM/yyyy HH:mm"}`).
    **options
        Any other option by the connector's name (`maxBytesPerTrigger=64 << 20`), or a keyword's.

    Returns
    -------
    DataFrame

    Notes
    -----
    In real-time mode (`.trigger(realTime="1 minute")` on the writer, pyspark 4.2 and newer),
    `real_time_partitions` tasks read the journals, each holding a task slot for the whole batch;
    see `spark_gazette.real_time`.

    Examples
    --------
    >>> events = read_stream(spark, broker="http://127.0.0.1:8080", selector="prefix=events/",
    ...                      starting_offsets="earliest", max_bytes_per_trigger=64 << 20)  # doctest: +SKIP
    """
    opts = _options.build(_options.SOURCE, _given(locals(), "spark", "schema", "parse_options"), options)
    return _loaded(_typed(spark.readStream.format("gazette").options(**opts), schema, parse_options))


def read(
    spark: SparkSession,
    broker: str | None = None,
    *,
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
    rpc_timeout: Duration | None = None,
    retry_timeout: Duration | None = None,
    trusted_ca_file: str | None = None,
    cert_file: str | None = None,
    cert_key_file: str | None = None,
    auth_token: str | None = None,
    auth_token_file: str | None = None,
    auth_token_provider: str | None = None,
    fragment_root: str | None = None,
    direct_fragment_reads: bool | None = None,
    schema: str | StructType | None = None,
    parse_options: Mapping[str, object] | None = None,
    protobuf_message: str | None = None,
    protobuf_descriptor_file: str | None = None,
    **options: object,
) -> DataFrame:
    """A batch DataFrame of the journals' messages, with the columns of `read_stream`.

    It holds what lies between `starting_offsets` (default "earliest") and `ending_offsets`
    (default "latest"), or between the first messages published at or after `starting_timestamp`
    and `ending_timestamp`.

    Parameters
    ----------
    spark : SparkSession
    broker : str, optional
        A broker's endpoint; else the session's `spark.datasource.gazette.broker`.
    selector, journals, starting_offsets, ending_offsets, read_committed, ... : optional
        The source's options by their snake_case names (`docs/options.md` has each once, with
        its default); Python values are converted (aware datetimes, timedeltas, dicts, lists).
    schema : str or StructType, optional
        Rows parsed into this schema's fields, as `read_stream` does.
    parse_options : mapping, optional
        Spark's parsing options by Spark's names.
    **options
        Any other option by the connector's name (`bytesPerPartition=64 << 20`), or a keyword's.

    Returns
    -------
    DataFrame

    Examples
    --------
    >>> from datetime import datetime, timezone
    >>> today = read(spark, broker="http://127.0.0.1:8080", selector="prefix=events/",
    ...              starting_timestamp=datetime(2026, 1, 1, tzinfo=timezone.utc))  # doctest: +SKIP
    """
    opts = _options.build(_options.SOURCE, _given(locals(), "spark", "schema", "parse_options"), options)
    return _loaded(_typed(spark.read.format("gazette").options(**opts), schema, parse_options))


def write_stream(
    df: DataFrame,
    broker: str | None = None,
    *,
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
    auth_token_file: str | None = None,
    auth_token_provider: str | None = None,
    reader_ring_size: int | None = None,
    **options: object,
) -> DataStreamWriter:
    """A DataStreamWriter that appends the streaming DataFrame `df` to journals, exactly once.

    Rows go to `journal`, or to the journals of `selector` (mapped by their `key` column, or
    named by their own `journal` column). Exactly-once streams need `checkpoint_location`
    (Spark does not show the session-wide spark.sql.streaming.checkpointLocation to sinks). The
    options are checked now, without contacting a broker; call `.start()` on the result.

    In real-time mode (`.outputMode("update").trigger(realTime="1 minute")`, after
    `configure_real_time(spark, per_query=True)`), rows that carry their input's `origin` column
    (`spark_gazette.origin`) are written exactly once, each visible as soon as it is written. The
    writer also gets Spark's option `asyncProgressTrackingEnabled=false` (unless given), which Spark
    reads to run the query without the asynchronous progress tracking Spark 4.3 gives real-time
    queries by default and allows its own sinks only; elsewhere it is Spark's default.

    Parameters
    ----------
    df : DataFrame
        Rows with a `value` column (string or binary), optionally `journal` and `key`; without
        `value`, each row is written as a JSON object of all its columns.
    broker : str, optional
        A broker's endpoint; else the session's `spark.datasource.gazette.broker`.
    journal, selector, checkpoint_location, mapping, delivery_guarantee, ... : optional
        The sink's options by their snake_case names (`docs/options.md` has each once, with its
        default); Python values are converted (bools, timedeltas, lists).
    **options
        Any other option by the connector's name (`flushBytes=1 << 20`), or a keyword's.

    Returns
    -------
    DataStreamWriter

    Examples
    --------
    >>> write_stream(rollups, broker=b, selector="prefix=rollups/",
    ...              checkpoint_location="/ckpt").start()  # doctest: +SKIP
    >>> copies = events.select(origin(events), to_json(struct("user", "amount")).alias("value"))  # doctest: +SKIP
    >>> (write_stream(copies, broker=b, journal="copies/all", checkpoint_location="/ckpt")
    ...     .outputMode("update").trigger(realTime="1 minute").start())  # doctest: +SKIP
    """
    # Spark's writer options a real-time query needs (asynchronous progress tracking off), for
    # this query alone: Spark's defaults elsewhere, and options given here win.
    opts = {**QUERY_OPTIONS, **_options.build(_options.SINK, _given(locals(), "df"), options)}
    # Spark checks a stream's sink options only when it starts; the connector checks them at a
    # load, without contacting a broker, so that a mistake is named here, where it was made.
    _loaded(df.sparkSession.read.format("gazette").options(**opts))
    return df.writeStream.format("gazette").options(**opts)


def write(
    df: DataFrame,
    broker: str | None = None,
    *,
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
    auth_token_file: str | None = None,
    auth_token_provider: str | None = None,
    batch_id: str | None = None,
    reader_ring_size: int | None = None,
    staging_location: str | None = None,
    mode: str = "append",
    **options: object,
) -> None:
    """Append the batch DataFrame `df` to journals, exactly once.

    Its messages become visible when the job commits, one ACK per journal, appended journal by
    journal; tasks' large runs are staged and appended after the ACKs, one append each (without
    `batch_id`, under `staging_location`, else `checkpoint_location`, else where docs/sink.md
    says). Journals are not committed together: a job whose commit fails part-way can leave some
    of the rows visible and the others not. With `batch_id` (and `checkpoint_location`) the job
    is recorded under that id first, and running it again with the same id, after a failure or
    not, completes it without writing any row twice. Without `batch_id` every call is a new write.

    Parameters
    ----------
    df : DataFrame
        Rows with a `value` column (string or binary), optionally `journal` and `key`; without
        `value`, each row is written as a JSON object of all its columns.
    broker : str, optional
        A broker's endpoint; else the session's `spark.datasource.gazette.broker`.
    journal, selector, checkpoint_location, batch_id, staging_location, ... : optional
        The sink's options by their snake_case names (`docs/options.md` has each once, with its
        default); Python values are converted (bools, timedeltas, lists).
    mode : str, default "append"
        The save mode; journals are append-only, and the connector refuses any other
        (GAZETTE_UNSUPPORTED_OUTPUT_MODE).
    **options
        Any other option by the connector's name (`flushBytes=1 << 20`), or a keyword's.

    Examples
    --------
    >>> write(daily, broker="http://127.0.0.1:8080", journal="reports/daily",
    ...       checkpoint_location="/ckpt/reports", batch_id="day-2026-01-01")  # doctest: +SKIP
    """
    opts = _options.build(_options.SINK, _given(locals(), "df", "mode"), options)
    with explained():
        df.write.format("gazette").options(**opts).mode(mode).save()


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


def _given(args: dict[str, object], *names: str) -> dict[str, object]:
    """A helper's option keywords as it was called: its arguments but `names` and `**options`."""
    return {k: v for k, v in args.items() if k not in names and k != "options"}
