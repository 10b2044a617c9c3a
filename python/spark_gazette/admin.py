"""Administration through the session's JVM (py4j): list journals with their write heads, apply
journal specs in gazctl's YAML form, publish test messages, and tell a streaming query's lag from
its checkpoint (`lag`; `python -m spark_gazette lag` prints it). These need a classic session;
under Spark Connect they raise a RuntimeError."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

from spark_gazette.options import CONNECTION, wire


def _admin(spark: SparkSession) -> Any:
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        raise RuntimeError(
            "spark_gazette.admin needs a classic SparkSession (it calls the connector through "
            "py4j); under Spark Connect use gazctl, or read and write with spark_gazette's helpers"
        )
    return jvm.io.sparkgazette.spark.admin.Admin


def list_journals(
    spark: SparkSession, broker: str, selector: str = "", **connection: str | int | timedelta
) -> list[dict[str, Any]]:
    """`[{"name", "labels": {name: [values]}, "writeHead"}]` for the journals `selector` matches.

    `connection`: the helpers' connection options (rpc_timeout, retry_timeout, trusted_ca_file,
    cert_file, cert_key_file, auth_token, auth_token_file, auth_token_provider, and a token
    provider's own `authTokenProvider.<setting>` by that name), as for read_stream; so for
    apply_specs and publish."""
    return json.loads(_admin(spark).listJournals(broker, selector, _connection(connection)))


def flatten_specs(tree: Mapping[str, Any], parent: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """gazctl's hierarchical spec (children inherit labels, replication and fragment) as a flat
    list of journal specs; labels as [name, value] pairs.

        >>> flatten_specs({"name": "events/", "fragment": {"length": 1048576},
        ...                "children": [{"name": "events/a", "labels": [{"name": "app", "value": "x"}]}]})
        [{'name': 'events/a', 'replication': 1, 'labels': [['app', 'x']], 'fragment': {'length': 1048576}}]
    """
    parent = parent or {}
    node = {
        "name": tree["name"],
        "replication": tree.get("replication", parent.get("replication", 1)),
        "labels": parent.get("labels", []) + [[lbl["name"], lbl.get("value", "")] for lbl in tree.get("labels", [])],
        "fragment": {**parent.get("fragment", {}), **tree.get("fragment", {})},
    }
    if tree.get("children"):
        return [spec for child in tree["children"] for spec in flatten_specs(child, node)]
    return [node]


def apply_specs(
    spark: SparkSession, broker: str, specs: str | Mapping[str, Any], **connection: str | int | timedelta
) -> list[str]:
    """Creates or updates journals from gazctl-style YAML text (needs PyYAML) or an already
    parsed dict, waiting until each accepts appends; returns the journal names."""
    if isinstance(specs, str):
        import yaml

        docs = [d for d in yaml.safe_load_all(specs) if d]
    else:
        docs = [specs]
    flat = [s for d in docs for s in flatten_specs(d)]
    _admin(spark).applySpecs(broker, json.dumps(flat), _connection(connection))
    return [s["name"] for s in flat]


def publish(
    spark: SparkSession,
    broker: str,
    journal: str,
    messages: Iterable[dict[str, Any] | str | bytes],
    uuid_pointer: str = "/_meta/uuid",
    uuid_field: int = 1,
    **connection: str | int | timedelta,
) -> int:
    """Publishes messages (dicts as JSON, str or bytes as they are) as committed messages with
    UUIDs, in one append; returns the journal's write head after it."""
    payloads = []
    for m in messages:
        raw = json.dumps(m).encode() if isinstance(m, dict) else m.encode() if isinstance(m, str) else bytes(m)
        payloads.append(base64.b64encode(raw).decode())
    return int(
        _admin(spark).publish(broker, journal, json.dumps(payloads), uuid_pointer, uuid_field, _connection(connection))
    )


def lag(spark: SparkSession, checkpoint: str, broker: str, **connection: str | int | timedelta) -> dict[str, Any]:
    """Where the streaming query whose checkpoint location is `checkpoint` stands in each journal
    it reads, against the journals' write heads now; the query may be running or stopped. The
    checkpoint is read, never written, through the session's Hadoop configuration (a local path,
    `file://`, `hdfs://`, `s3a://`, ...).

    Returns `{"checkpoint", "committedBatch", "plannedBatch", "measuredAt", "bytesBehind",
    "timeBehindMs", "sources": [{"source", "bytesBehind", "timeBehindMs", "journals": [{"journal",
    "committed", "planned", "writeHead", "bytesBehind", "timeBehindMs", "note"}]}]}`: `committed`
    is where the last committed batch ended (where the query began, before its first commit),
    `planned` where a batch planned and not yet committed will end (null when none is),
    `bytesBehind` the write head less `committed`, `timeBehindMs` the age of the first message at
    or after `committed` at `measuredAt` (0 at the head), as the source's `maxTimeBehindHeadMs`
    metric counts it; a number not known is null and `note` says why. Totals sum the bytes behind
    and take the most time behind. A broker that does not answer is retried for 10 seconds
    unless `retry_timeout` says otherwise. A checkpoint location that is not a streaming
    query's reading journals raises the connector's GAZETTE_NOT_A_SOURCE_CHECKPOINT, saying what
    is there instead.

        report = lag(spark, "s3a://bucket/checkpoints/rollups", broker="http://127.0.0.1:8080")
        print(report["bytesBehind"])
    """
    return json.loads(_admin(spark).lag(checkpoint, broker, _connection(connection)))


def _connection(given: Mapping[str, Any]) -> str:
    """The connection options as the JVM takes them, a JSON object; it checks their values. A
    keyword outside CONNECTION is a wrong call, as a misspelt keyword of any function is."""
    unknown = sorted(k for k in set(given) - set(CONNECTION) if not k.startswith(_PROVIDER_SETTING))
    if unknown:
        raise TypeError(f"unknown connection options {', '.join(unknown)}; known: {', '.join(CONNECTION)}")
    return json.dumps({CONNECTION.get(k, k): wire(k, v) for k, v in given.items() if v is not None})


# A token provider's own settings (docs/operations.md), passed on by their option names.
_PROVIDER_SETTING = "authTokenProvider."
