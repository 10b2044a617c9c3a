"""A batch write of ROWS rows to chaos/batch/ and a batch read of them back, on the token options
given (a token file renewed under it, or a provider), on tokens living a few seconds.

    python batch.py MASTER BROKERS JARS OPTIONS_JSON ROWS    (prints RESULT {"written", "read", ...})
"""

import json
import sys
import time

from pyspark.sql import SparkSession


def main(master: str, brokers: str, jars: str, options: dict, rows: int) -> None:
    spark = (
        SparkSession.builder.master(master)
        .appName("tokens-batch")
        .config("spark.jars", jars)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.executor.memory", "512m")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    started = time.monotonic()
    # Padded rows: enough bytes that writing and reading them take longer than a token lives.
    df = spark.range(rows, numPartitions=4).selectExpr(
        "to_json(named_struct('n', id, 'pad', repeat('x', 400))) AS value", "cast(id AS string) AS key"
    )
    (
        df.write.format("gazette")
        .option("broker", brokers)
        .option("selector", "prefix=chaos/batch/")
        .options(**options)
        .mode("append")
        .save()
    )
    wrote = time.monotonic()
    back = spark.read.format("gazette").option("broker", brokers).option("selector", "prefix=chaos/batch/")
    read = back.options(**options).option("bytesPerPartition", str(8 << 20)).load().count()
    result = {"written": rows, "read": read, "write_s": wrote - started, "read_s": time.monotonic() - wrote}
    print("RESULT " + json.dumps(result), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), int(sys.argv[5]))
