"""The pipeline under chaos, as its own process so that it can be killed whole: gazette
(read committed) -> Spark -> gazette (exactly once), on a standalone master.

    python query.py MASTER BROKERS CHECKPOINT JAR [--drain]

Without --drain it runs until killed; with --drain it reads up to the write heads it finds at
start (availableNow) and exits 0.
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql.functions import col


def main(master: str, brokers: str, checkpoint: str, jar: str, drain: bool) -> None:
    spark = (
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
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    # The connector's own retries and warnings, to read after a stall.
    log4j = spark._jvm.org.apache.logging.log4j
    log4j.core.config.Configurator.setLevel("io.sparkgazette", log4j.Level.INFO)
    source = (
        spark.readStream.format("gazette")
        .option("broker", brokers)
        .option("selector", "prefix=chaos/in/")
        .option("startingOffsets", "earliest")
        .option("maxBytesPerTrigger", "65536")
        .load()
    )
    # Each output message names its input message, so the judge can match them one to one.
    rows = source.select(col("journal").alias("src"), "begin", "uuid", col("begin").cast("string").alias("key"))
    writer = (
        rows.writeStream.format("gazette")
        .option("broker", brokers)
        .option("selector", "prefix=chaos/out/")
        .option("checkpointLocation", checkpoint)
    )
    writer = writer.trigger(availableNow=True) if drain else writer.trigger(processingTime="500 milliseconds")
    writer.start().awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:5], drain="--drain" in sys.argv[5:])
