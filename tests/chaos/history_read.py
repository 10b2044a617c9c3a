"""A batch read of the chaos pipeline's input journals from their first byte, as its own process in
Spark's network namespace (tests/chaos/network_chaos.py runs it while the fragment store is
faulted): read uncommitted, every message up to `--ends`, with the connector's direct fragment
reads (the default), so that the persisted history comes straight from the store when the store
answers, and through the brokers when it does not.

    python history_read.py BROKERS JAR OUT --starts '{"journal": offset, ...}' --ends '{...}' [--options JSON]

Prints `ready` once its Spark session is up (the harness brings the fault then), writes each row's
journal and offset to OUT, one per line, and exits 0; a failed read exits 1 with its error on
stderr.
"""

import json
import sys
import time

from pyspark.sql import SparkSession


def main(brokers: str, jar: str, out: str, starts: dict, ends: dict, options: dict) -> None:
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("chaos-history")
        .config("spark.jars", jar)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    print("ready", flush=True)
    started = time.monotonic()
    rows = (
        spark.read.format("gazette")
        .option("broker", brokers)
        .option("journals", ",".join(sorted(ends)))
        .option("startingOffsets", json.dumps(starts))
        .option("endingOffsets", json.dumps(ends))
        .option("readCommitted", "false")
        .options(**options)
        .load()
        .select("journal", "begin")
        .collect()
    )
    with open(out, "w") as f:
        f.writelines(f"{r['journal']} {r['begin']}\n" for r in rows)
    print(f"read {len(rows)} messages in {time.monotonic() - started:.1f} s", flush=True)
    spark.stop()


if __name__ == "__main__":
    args = sys.argv[4:]
    main(
        *sys.argv[1:4],
        starts=json.loads(args[args.index("--starts") + 1]),
        ends=json.loads(args[args.index("--ends") + 1]),
        options=json.loads(args[args.index("--options") + 1]) if "--options" in args else {},
    )
