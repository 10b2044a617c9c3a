"""The pipeline under chaos, as its own process so that it can be killed whole: gazette
(read committed) -> Spark -> gazette (exactly once), on a standalone master.

    python query.py MASTER BROKERS CHECKPOINT JAR [--drain] [--real-time [--heads JSON]] [--options JSON]
        [--sink-fault SPEC]

Without --drain it runs until killed; with --drain it reads up to the write heads it finds at
start (availableNow) and exits 0.

With --real-time the query runs in Spark's real-time mode (`trigger(realTime=...)`), each row
carrying its input message (`origin`: journal and UUID), from which the sink derives the row's
UUID, so that a batch run again after a failure writes duplicates that readers drop. Real-time
mode has no availableNow, so its drain (`--drain --heads '{"journal": offset, ...}'`) runs until
a committed batch's end offsets reach the given write heads, then stops the query and exits 0.

--options '{"retryTimeout": "40s", ...}' sets connection options of both the source and the sink;
--sink-fault sets the sink's test.sinkFault (the real-time chaos: `task-zombie:0/5`).
"""

import json
import os
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql.functions import col, struct

REAL_TIME_BATCH = "2 seconds"  # how often a real-time query checkpoints: a kill finds a batch committed soon


def main(
    master: str,
    brokers: str,
    checkpoint: str,
    jar: str,
    drain: bool,
    real_time: bool,
    heads: dict,
    options: dict,
    sink_fault: str | None = None,
) -> None:
    builder = (
        SparkSession.builder.master(master)
        .appName("chaos")
        .config("spark.jars", jar)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.executor.memory", "512m")
        .config("spark.cores.max", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.task.maxFailures", "8")
    )
    if real_time:
        builder = (
            builder.config("spark.sql.streaming.realTimeMode.allowlistCheck", "false")  # our sink is not on it
            .config("spark.sql.streaming.realTimeMode.minBatchDuration", "1s")
            .config("spark.sql.streaming.realTimeMode.asyncProgressTrackingByDefault.enabled", "false")
        )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    # The connector's own retries and warnings, to read after a stall.
    log4j = spark._jvm.org.apache.logging.log4j
    log4j.core.config.Configurator.setLevel("io.sparkgazette", log4j.Level.INFO)
    # A task that fails, with its error: the network chaos tells a task failing as documented from a stall.
    log4j.core.config.Configurator.setLevel("org.apache.spark.scheduler.TaskSetManager", log4j.Level.WARN)
    reader = (
        spark.readStream.format("gazette")
        .option("broker", brokers)
        .option("selector", "prefix=chaos/in/")
        .option("startingOffsets", "earliest")
        .options(**options)
    )
    # Real-time: one task a journal, each holding one of the two cores for the whole batch.
    reader = reader.option("realTimePartitions", "2") if real_time else reader.option("maxBytesPerTrigger", "65536")
    source = reader.load()
    # Each output message names its input message, so the judge can match them one to one.
    columns = [col("journal").alias("src"), "begin", "uuid", col("begin").cast("string").alias("key")]
    if real_time:
        columns.append(struct(col("journal"), col("uuid")).alias("origin"))
    rows = source.select(*columns)
    writer = (
        rows.writeStream.format("gazette")
        .option("broker", brokers)
        .option("selector", "prefix=chaos/out/")
        .option("checkpointLocation", checkpoint)
        .options(**options)
    )
    if sink_fault:
        writer = writer.option("test.sinkFault", sink_fault)
    if real_time:
        query = writer.outputMode("update").trigger(realTime=REAL_TIME_BATCH).start()
        if drain:
            _await_heads(query, checkpoint, heads)
            query.stop()
        else:
            query.awaitTermination()
    else:
        writer = writer.trigger(availableNow=True) if drain else writer.trigger(processingTime="500 milliseconds")
        writer.start().awaitTermination()
    spark.stop()


def _await_heads(query, checkpoint: str, heads: dict) -> None:
    """Until a committed batch's end offsets reach `heads` in every journal (raising the query's
    error if it fails first)."""
    while True:
        if not query.isActive:
            query.awaitTermination()  # raises the query's error
            raise RuntimeError("the query stopped before reaching the write heads")
        progress = query.lastProgress
        if progress and progress["sources"]:
            ends = progress["sources"][0]["endOffset"] or {}
            ends = json.loads(ends) if isinstance(ends, str) else ends
            behind = {j: h for j, h in heads.items() if _offset(ends.get(j)) < h}
            committed = os.path.exists(os.path.join(checkpoint, "commits", str(progress["batchId"])))
            if not behind and committed:
                print(f"drained: batch {progress['batchId']} ended at {ends}", flush=True)
                return
        time.sleep(0.5)


def _offset(position) -> int:
    if position is None:
        return -1
    return int(position["offset"]) if isinstance(position, dict) else int(position)


if __name__ == "__main__":
    args = sys.argv[5:]
    heads = json.loads(args[args.index("--heads") + 1]) if "--heads" in args else {}
    options = json.loads(args[args.index("--options") + 1]) if "--options" in args else {}
    fault = args[args.index("--sink-fault") + 1] if "--sink-fault" in args else None
    main(
        *sys.argv[1:5],
        drain="--drain" in args,
        real_time="--real-time" in args,
        heads=heads,
        options=options,
        sink_fault=fault,
    )
