"""Where a streaming query stands in each Gazette journal it reads, from its checkpoint location:
the offset its last committed batch ended at, the journal's write head, and how far behind it
the query is in bytes and in time (the age of the oldest message not read), per journal and in
total, for a running or a stopped query. A batch planned and not yet
committed (one in progress) adds the offsets it will end at.

    python -m spark_gazette lag --checkpoint /tmp/rollups-ckpt --broker http://127.0.0.1:8080
    python -m spark_gazette lag --checkpoint s3a://bucket/ckpt --broker https://broker:8080 \\
        --trusted-ca-file ca.pem --json \\
        --conf spark.jars.packages=org.apache.hadoop:hadoop-aws:3.4.1

The checkpoint location is read through Hadoop's file systems on a local Spark (local paths,
file://, hdfs://, s3a://, ...; `--conf` sets what they need), and never written. `--json` prints
what `spark_gazette.admin.lag` returns."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any

from spark_gazette.options import CONNECTION

SUMMARY = "where a streaming query stands in its journals, from its checkpoint: committed offsets, write heads, lag"

COLUMNS = ("source", "journal", "committed", "planned", "writeHead", "bytesBehind", "timeBehindMs", "note")
HEADERS = {
    "source": "SOURCE",
    "journal": "JOURNAL",
    "committed": "COMMITTED",
    "planned": "PLANNED",
    "writeHead": "WRITE HEAD",
    "bytesBehind": "BYTES BEHIND",
    "timeBehindMs": "TIME BEHIND",
    "note": "NOTE",
}
NUMERIC = {"committed", "planned", "writeHead", "bytesBehind", "timeBehindMs"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--checkpoint", required=True, help="the query's checkpoint location (a path or a URI)")
    parser.add_argument("--broker", required=True, help="broker endpoints, as the connector's broker option")
    parser.add_argument("--json", action="store_true", help="print the lag as JSON instead of a table")
    for keyword, option in CONNECTION.items():
        said = f"the connector's {option} option"
        if keyword == "retry_timeout":
            said += " (10s here: how long a broker that does not answer is retried)"
        parser.add_argument("--" + keyword.replace("_", "-"), dest=keyword, metavar=option, help=said)
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting of the local session that reads the checkpoint (repeatable)",
    )


def run(args: argparse.Namespace) -> int:
    conf = {}
    for setting in args.conf:
        key, sep, value = setting.partition("=")
        if not sep or not key:
            print(f"lag: --conf takes KEY=VALUE, not {setting!r}", file=sys.stderr)
            return 2
        conf[key] = value
    connection = {k: getattr(args, k) for k in CONNECTION if getattr(args, k) is not None}

    from spark_gazette.admin import lag
    from spark_gazette.commands.session import JvmStartError, jvm_message, local_session

    spark, started = None, False
    try:
        spark, started = local_session("spark-gazette lag", conf)
        report = lag(spark, args.checkpoint, args.broker, **connection)
    except JvmStartError as e:
        print(f"lag: the JVM did not start: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - the JVM's errors are the user's: their message, no trace
        message = jvm_message(e)
        if message is None:
            raise
        if "GAZETTE_BROKER_UNAVAILABLE" in message:
            message += "; --retry-timeout gives the brokers longer to answer"
        print(f"lag: {message}", file=sys.stderr)
        return 1
    finally:
        if started and spark is not None:
            spark.stop()
    print(json.dumps(report, indent=2) if args.json else table(report))
    return 0


def table(report: Mapping[str, Any]) -> str:
    """`spark_gazette.admin.lag`'s report as aligned columns, a journal a line and a total line
    (bytes behind summed, the most time behind). The source column shows only for a query with
    several Gazette sources, the planned one only while a batch is in progress, the note only
    where a number is missing."""
    rows = [{"source": s["source"], **j} for s in report["sources"] for j in s["journals"]]
    shown = [
        c
        for c in COLUMNS
        if (c != "source" or len(report["sources"]) > 1)
        and (c != "planned" or report["plannedBatch"] is not None)
        and (c != "note" or any(r["note"] for r in rows))
    ]
    total = {c: "" for c in shown}
    total[shown[0]] = "total"
    total["bytesBehind"] = report["bytesBehind"]
    total["timeBehindMs"] = report["timeBehindMs"]
    lines = [[HEADERS[c] for c in shown]]
    lines += [[_cell(r.get(c), c) for c in shown] for r in rows + [total]]
    widths = [max(len(line[i]) for line in lines) for i in range(len(shown))]
    out = [_state(report)]
    for line in lines:
        cells = [cell.rjust(w) if c in NUMERIC else cell.ljust(w) for c, cell, w in zip(shown, line, widths)]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)


def _state(report: Mapping[str, Any]) -> str:
    committed, planned = report["committedBatch"], report["plannedBatch"]
    said = [f"batch {committed} committed" if committed is not None else "no batch committed"]
    if planned is not None:
        said.append(f"batch {planned} planned")
    return f"{report['checkpoint']}: {', '.join(said)}"


def _cell(value: Any, column: str) -> str:
    if value is None:
        return "" if column == "note" else "-"
    if column == "timeBehindMs" and isinstance(value, int):
        return duration(value)
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def duration(ms: int) -> str:
    """Milliseconds as a person reads them: `0s`, `850ms`, `12.3s`, `4m05s`, `2h07m`, `3d04h`.

    >>> [duration(ms) for ms in (0, 850, 12_345, 245_000, 7_620_000, 273_600_000)]
    ['0s', '850ms', '12.3s', '4m05s', '2h07m', '3d04h']
    """
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f}s"
    s = ms // 1000
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"
