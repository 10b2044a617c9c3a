"""Real-time mode (`trigger(realTime=...)`, PySpark 4.2 and newer): what a Gazette query needs.

A real-time query reads with long-running tasks that emit each committed message as soon as it
is read, and the sink writes each row as it comes, so a row reaches Gazette in milliseconds
instead of a micro-batch later. Set the session up once, give the sink each row's `origin`:

    spark = configure_real_time(configure_spark_with_gazette(SparkSession.builder)).getOrCreate()
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

REAL_TIME_CONFS: Mapping[str, str] = {
    # Spark lets only its own sinks (Kafka, foreach, console) run in real-time mode unless this
    # check is off; the Gazette sink is not on its list.
    "spark.sql.streaming.realTimeMode.allowlistCheck": "false",
    # Spark 4.3 turns asynchronous progress tracking on for real-time queries by default, and then
    # refuses every sink but its own ("Sink gazette does not support async progress tracking").
    "spark.sql.streaming.realTimeMode.asyncProgressTrackingByDefault.enabled": "false",
}
"""The session confs `configure_real_time` sets, by Spark's names."""

MIN_BATCH_DURATION = "spark.sql.streaming.realTimeMode.minBatchDuration"


def configure_real_time(target: Target, min_batch_duration: str | None = None) -> Target:
    """Sets what real-time queries through the Gazette sink need on a SparkSession builder, or on
    a running session (a classic one or a Spark Connect client), and returns it:
    `spark.sql.streaming.realTimeMode.allowlistCheck=false`, without which Spark refuses every sink
    but Kafka, foreach and console in real-time mode, and, for Spark 4.3,
    `spark.sql.streaming.realTimeMode.asyncProgressTrackingByDefault.enabled=false`, without which
    it refuses the Gazette sink ("does not support async progress tracking").
    `min_batch_duration` ("1 second") lowers the shortest batch duration Spark accepts (5 seconds
    by default), for tests: short batches checkpoint more often and raise latency's tail.

        spark = configure_real_time(configure_spark_with_gazette(SparkSession.builder)).getOrCreate()
        configure_real_time(spark)   # or on a session already running

    A source read into `foreach` or `console` needs none of it.
    """
    confs = dict(REAL_TIME_CONFS)
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
