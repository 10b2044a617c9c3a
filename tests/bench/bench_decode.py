"""Decoding throughput of protobuf values: the connector's JVM decoder against its Python twin
(what Spark Connect sessions use), with Spark's own `from_json` over the same messages as ndjson
as the reference.

Builds ROWS purchase-like messages (a string, integers, a double, an enum, a repeated string, a
map and a timestamp) both as protobuf payloads and as JSON lines, caches each as a one-column
DataFrame in local[1], and sums one decoded field over all rows, twice per decoder, keeping the
faster run. Whole messages are decoded in every case: JSON field pruning is switched off.

    python tests/bench/bench_decode.py [--rows 200000]
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from protos import event_class, event_set  # noqa: E402
from timing import timed  # noqa: E402

# The Python engine's workers need the protobuf package: run them with this interpreter.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

JSON_SCHEMA = (
    "user STRING, amount INT, count BIGINT, score DOUBLE, kind STRING, tags ARRAY<STRING>, "
    "counts MAP<STRING, BIGINT>, at TIMESTAMP"
)


def messages(rows: int):
    Event = event_class()
    for i in range(rows):
        e = Event(
            user=f"user-{i % 997}",
            amount=i % 5000 - 2500,
            count=i,
            score=i / 7,
            kind=i % 2,
            tags=[f"t{i % 13}", "promo"],
            counts={"views": i % 31, "clicks": i % 7},
            at={"seconds": 1_700_000_000 + i},
        )
        doc = {
            "user": e.user,
            "amount": e.amount,
            "count": e.count,
            "score": e.score,
            "kind": "REFUND" if e.kind else "SALE",
            "tags": list(e.tags),
            "counts": dict(e.counts),
            "at": f"2023-11-14T22:13:{i % 60:02d}Z",
        }
        yield e.SerializeToString(), json.dumps(doc)


def main() -> None:
    parser = argparse.ArgumentParser(description="protobuf decoding throughput, JVM against Python and from_json")
    parser.add_argument("--rows", type=int, default=200_000)
    args = parser.parse_args()

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from spark_gazette import configure_spark_with_gazette, parse_protobuf

    spark = configure_spark_with_gazette(
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.optimizer.enableJsonExpressionOptimization", "false")
        .config("spark.log.level", "ERROR")
    ).getOrCreate()
    try:
        data = list(messages(args.rows))
        proto = spark.createDataFrame([(p,) for p, _ in data], "value BINARY").cache()
        ndjson = spark.createDataFrame([(j,) for _, j in data], "value STRING").cache()
        proto_bytes, json_bytes = sum(len(p) for p, _ in data), sum(len(j) for _, j in data)
        proto.count(), ndjson.count()
        with tempfile.TemporaryDirectory() as tmp:
            desc = Path(tmp) / "event.desc"
            desc.write_bytes(event_set().SerializeToString())

            def decode(engine):
                return lambda: (
                    parse_protobuf(proto, "demo.Event", str(desc), engine=engine).agg(F.sum("message.count")).first()[0]
                )

            results = {
                "from_json": (
                    timed(
                        lambda: (
                            ndjson.select(F.from_json("value", JSON_SCHEMA).alias("message"))
                            .agg(F.sum("message.count"))
                            .first()[0]
                        )
                    ),
                    json_bytes,
                ),
                "jvm": (timed(decode("jvm")), proto_bytes),
                "python": (timed(decode("python")), proto_bytes),
            }
    finally:
        spark.stop()

    print(
        f"{args.rows} messages: {proto_bytes / args.rows:.0f} bytes as protobuf, {json_bytes / args.rows:.0f} as JSON"
    )
    for name, ((took, _), size) in results.items():
        print(f"  {name:<10} {took:7.2f} s  {args.rows / took / 1e3:8.1f} k rows/s  {size / took / 1e6:7.1f} MB/s")
    assert len({total for (_, total), _ in results.values()}) == 1, "the decoders disagree"
    jvm = results["jvm"][0][0]
    print(f"ratio jvm/python:    {results['python'][0][0] / jvm:.2f} (rows per second, >1 is faster)")
    print(f"ratio jvm/from_json: {results['from_json'][0][0] / jvm:.2f}")


if __name__ == "__main__":
    main()
