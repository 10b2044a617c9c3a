"""Real-time mode (`trigger(realTime=...)`, PySpark 4.2 and newer): what a Gazette query needs.

A real-time query reads with long-running tasks that emit each committed message as soon as it
is read, and the sink writes each row as it comes, so a row reaches Gazette in milliseconds
instead of a micro-batch later. Set the session up once, give the sink each row's `origin`:

    spark = configure_real_time(configure_spark_with_gazette(SparkSession.builder), per_query=True).getOrCreate()
    events = read_stream(spark, broker=b, selector="prefix=events/", real_time_partitions=4,
                         schema="user STRING, amount INT")
    out = events.select(origin(events), col("user").alias("key"), to_json(struct("user", "amount")).alias("value"))
    (write_stream(out, broker=b, selector="prefix=copies/", checkpoint_location="/ckpt")
        .outputMode("update").trigger(realTime="1 minute").start())

- The batch duration (`realTime="1 minute"`) is how often the query checkpoints, not a latency.
- Output mode `update` and a checkpoint are required; Spark 4.2 runs stateless queries only
  (projections, filters, parsing), 4.3 adds aggregations and dropDuplicates.
- Every real-time task holds a task slot for the whole batch: the cluster needs at least
  `real_time_partitions` free slots (a stateless query writes in the tasks that read), and
  `local[N]` counts threads, not cores, so `local[4]` runs four tasks on two cores.
- A Python `foreach` writer is handed its rows in pickled batches that grow as they go, so in
  practice when Spark's batch ends, not as they are read. The Gazette sink and JVM writers get
  each row as it is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

Target = TypeVar("Target")

ALLOWLIST_CHECK = "spark.sql.streaming.realTimeMode.allowlistCheck"
ASYNC_PROGRESS_TRACKING_BY_DEFAULT = "spark.sql.streaming.realTimeMode.asyncProgressTrackingByDefault.enabled"

REAL_TIME_CONFS: Mapping[str, str] = {
    # Spark lets only its own sinks (Kafka, foreach, console) run in real-time mode unless this
    # check is off; the Gazette sink is not on its list. Spark has no per-query form of it.
    ALLOWLIST_CHECK: "false",
    # Spark 4.3 turns asynchronous progress tracking on for real-time queries by default, and then
    # refuses every sink but its own ("Sink gazette does not support async progress tracking").
    # QUERY_OPTIONS turns it off for one query only.
    ASYNC_PROGRESS_TRACKING_BY_DEFAULT: "false",
}
"""The session confs `configure_real_time` sets, by Spark's names (with `per_query=True`, the
allowlist check's only)."""

QUERY_OPTIONS: Mapping[str, str] = {"asyncProgressTrackingEnabled": "false"}
"""Spark's writer options that a real-time query through the Gazette sink needs, set on the query
alone (Spark reads them from the writer's options; `write_stream` sets them unless told otherwise):
`asyncProgressTrackingEnabled=false` turns off, for this query, the asynchronous progress tracking
Spark 4.3 gives real-time queries by default, which it allows its own sinks only. Spark spells it so
and reads it in no other capitals."""

MIN_BATCH_DURATION = "spark.sql.streaming.realTimeMode.minBatchDuration"


def configure_real_time(target: Target, min_batch_duration: str | None = None, *, per_query: bool = False) -> Target:
    """Sets what real-time queries through the Gazette sink need on a SparkSession builder, or on
    a running session (a classic one or a Spark Connect client), and returns it.

    `per_query=True` (recommended) sets for the session only what Spark has no per-query setting
    for, `spark.sql.streaming.realTimeMode.allowlistCheck=false`, and leaves Spark's asynchronous
    progress tracking of real-time queries as the session has it: each query through the Gazette
    sink turns it off for itself with the writer option `asyncProgressTrackingEnabled=false`
    (`QUERY_OPTIONS`), which `write_stream` sets. Without it (the default, as before), the session
    also gets `spark.sql.streaming.realTimeMode.asyncProgressTrackingByDefault.enabled=false`, which
    turns Spark 4.3's asynchronous progress tracking off for every real-time query of the session,
    Kafka's too, that does not ask for it; a query through `df.writeStream.format("gazette")`
    without the writer option needs that.

    What `allowlistCheck=false` turns off, for every real-time query of the session, is two checks
    of Spark's, which then log a warning instead of failing the query: when a query starts, that its
    sink is one of Spark's (Kafka, foreach, console); and at every batch, that each operator between
    the real-time scan and the sink is one Spark lists as able to run in real-time mode (projections,
    filters, explode, unions, broadcast joins, ...; Spark 4.3 adds shuffles but range-partitioned
    ones, aggregations, dropDuplicates, watermarks and transformWithState), so an operator Spark has
    not vetted, such as a sort, runs, and may stall or fail the batch instead of being refused.
    Spark's other checks of real-time queries stay: update output mode, a source and a sink that
    support real-time mode (`foreachBatch` is refused), the stateful operators its version allows,
    the shortest batch duration. The Gazette sink still refuses a shuffle before an exactly-once
    write. Spark has no narrower setting of it.

    `min_batch_duration` ("1 second") lowers the shortest batch duration Spark accepts (5 seconds
    by default), for tests: short batches checkpoint more often and raise latency's tail.

        spark = configure_real_time(configure_spark_with_gazette(SparkSession.builder), per_query=True).getOrCreate()
        configure_real_time(spark, per_query=True)   # or on a session already running

    A source read into `foreach` or `console` needs none of it.
    """
    confs = {ALLOWLIST_CHECK: REAL_TIME_CONFS[ALLOWLIST_CHECK]} if per_query else dict(REAL_TIME_CONFS)
    if min_batch_duration is not None:
        confs[MIN_BATCH_DURATION] = min_batch_duration
    runtime = getattr(target, "conf", None)
    if runtime is not None and hasattr(runtime, "set"):  # a SparkSession
        for key, value in confs.items():
            runtime.set(key, value)
        return target
    for key, value in confs.items():  # a SparkSession.Builder
        target = target.config(key, value)  # type: ignore[attr-defined]
    return target


def origin(df: DataFrame) -> Column:
    """The sink's `origin` column: for each row of `df`, a stream that `read_stream` returned,
    the journal and UUID of the message it came from, as struct<journal: string, uuid: string>
    (`journal` and `uuid`, or `_gazette.journal` and `_gazette.uuid` for typed rows).

    A real-time stream written with this column is exactly once: each row becomes visible to
    read-committed readers as soon as it is written, under a UUID that follows from its origin,
    so that the rows a batch run again after a failure writes again are dropped by readers. Select
    it beside the other columns, from the rows as read by a deterministic, stateless query
    (projections, filters, parsing, explode), with no shuffle between the source and the sink.
    Rows without a `key` (or `journal`) are placed by their origin, so a batch run again puts
    each row where its first run did.

        events = read_stream(spark, broker=b, selector="prefix=events/", schema="user STRING, amount INT")
        big = events.where("amount > 100").select(
            origin(events), col("user").alias("key"), to_json(struct("user", "amount")).alias("value"))
    """
    from pyspark.sql.functions import col, struct

    columns = df.columns
    if "_gazette" in columns:
        prefix = "_gazette."
    elif "journal" in columns and "uuid" in columns:
        prefix = ""
    else:
        raise ValueError(
            "origin(df) takes the rows of a Gazette stream: columns journal and uuid, or the struct _gazette "
            f"of typed rows; this DataFrame has {', '.join(columns)}"
        )
    return struct(col(prefix + "journal").alias("journal"), col(prefix + "uuid").alias("uuid")).alias("origin")
