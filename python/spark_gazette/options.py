"""The connector's options from Python values: one name per option, as in the project's README
(snake_case here, camelCase on the wire), each value checked before Spark sees it."""

import json
import re
from datetime import datetime, timedelta, timezone
from typing import Mapping

# How the client reaches the brokers: the same options for the source and the sink.
CONNECTION = {
    "rpc_timeout": "rpcTimeout",
    "retry_timeout": "retryTimeout",
    "trusted_ca_file": "trustedCaFile",
    "cert_file": "certFile",
    "cert_key_file": "certKeyFile",
    "auth_token": "authToken",
}

SOURCE = {
    "broker": "broker",
    "selector": "selector",
    "journals": "journals",
    "starting_offsets": "startingOffsets",
    "ending_offsets": "endingOffsets",
    "starting_timestamp": "startingTimestamp",
    "starting_offsets_by_timestamp": "startingOffsetsByTimestamp",
    "starting_offsets_by_timestamp_strategy": "startingOffsetsByTimestampStrategy",
    "ending_timestamp": "endingTimestamp",
    "ending_offsets_by_timestamp": "endingOffsetsByTimestamp",
    "read_committed": "readCommitted",
    "max_bytes_per_trigger": "maxBytesPerTrigger",
    "min_bytes_per_trigger": "minBytesPerTrigger",
    "max_trigger_delay": "maxTriggerDelay",
    "fail_on_data_loss": "failOnDataLoss",
    "fail_on_malformed": "failOnMalformed",
    "uuid_pointer": "uuidPointer",
    "uuid_field": "uuidField",
    "producer_prune_horizon": "producerPruneHorizon",
    "include_labels": "includeLabels",
    "sequencer_ring_size": "sequencerRingSize",
    "sequencer_ring_bytes": "sequencerRingBytes",
    "fragment_root": "fragmentRoot",
    "bytes_per_partition": "bytesPerPartition",
    "min_partitions": "minPartitions",
    **CONNECTION,
}

SINK = {
    "broker": "broker",
    "journal": "journal",
    "selector": "selector",
    "mapping": "mapping",
    "delivery_guarantee": "deliveryGuarantee",
    "checkpoint_location": "checkpointLocation",
    "uuid_pointer": "uuidPointer",
    "uuid_field": "uuidField",
    "flush_bytes": "flushBytes",
    "batch_id": "batchId",
    "reader_ring_size": "readerRingSize",
    **CONNECTION,
}

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _millis(name: str, value) -> int:
    """Milliseconds since 1970 from an int, or from a timezone-aware datetime."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            _fail(name, value, "a timezone-aware datetime, or milliseconds since 1970")
        millis = (value - _EPOCH) // timedelta(milliseconds=1)
        if millis < 0:
            _fail(name, value, "a time from 1970 on")
        return millis
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_MILLIS:
        _fail(name, value, f"milliseconds since 1970 (an int from 0 to {_MAX_MILLIS}), or a timezone-aware datetime")
    return value


# The last millisecond a message UUID's clock can hold (year 3409).
_MAX_MILLIS = 45426782430342


_DURATION = re.compile(r"^\s*\d+\s*(ms|s|m|min|h|d)?\s*$", re.IGNORECASE)


def _fail(name: str, value, expected: str):
    raise ValueError(f"Gazette option '{name}' has invalid value {value!r}: expected {expected}")


def _check(name: str, value) -> str:
    """The option's wire value, or a ValueError naming the option."""
    if name == "auth_token":  # never shown, not even in an error
        if not isinstance(value, str) or not value.strip() or any(c.isspace() for c in value):
            raise ValueError("Gazette option 'auth_token' has an invalid value (not shown): expected a JWT without spaces")
        return value
    if name == "broker":
        brokers = [b.strip() for b in str(value).split(",") if b.strip()]
        if not brokers or not all(re.match(r"^https?://[^/\s]+$", b) for b in brokers):
            _fail(name, value, "http(s)://host:port, comma-separated for several")
        return ",".join(brokers)
    if name in ("journals",):
        items = value if isinstance(value, (list, tuple)) else str(value).split(",")
        items = [str(j).strip() for j in items if str(j).strip()]
        if not items:
            _fail(name, value, "one or more journal names")
        return ",".join(items)
    if name in ("starting_offsets", "ending_offsets"):
        if isinstance(value, Mapping):
            if not all(isinstance(v, int) and not isinstance(v, bool) and v >= -2 for v in value.values()):
                _fail(name, value, "offsets >= 0, or -2 (earliest) or -1 (latest)")
            return json.dumps(dict(value))
        if value in ("earliest", "latest"):
            return value
        _fail(name, value, "'earliest', 'latest' or a dict of journal offsets")
    if name in ("starting_timestamp", "ending_timestamp"):
        return str(_millis(name, value))
    if name in ("starting_offsets_by_timestamp", "ending_offsets_by_timestamp"):
        if not isinstance(value, Mapping):
            _fail(name, value, "a dict of times by journal name")
        return json.dumps({str(j): _millis(name, t) for j, t in value.items()})
    if name == "starting_offsets_by_timestamp_strategy" and value not in ("error", "latest"):
        _fail(name, value, "'error' or 'latest'")
    if name in ("read_committed", "fail_on_data_loss", "fail_on_malformed", "include_labels"):
        if not isinstance(value, bool):
            _fail(name, value, "True or False")
        return "true" if value else "false"
    if name in ("max_bytes_per_trigger", "min_bytes_per_trigger", "uuid_field", "sequencer_ring_size",
                "sequencer_ring_bytes", "flush_bytes", "bytes_per_partition", "min_partitions"):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            _fail(name, value, "a positive int")
        return str(value)
    if name == "reader_ring_size":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            _fail(name, value, "an int >= 0")
        return str(value)
    if name in ("max_trigger_delay", "producer_prune_horizon", "rpc_timeout", "retry_timeout"):
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return f"{value}ms"
        if not isinstance(value, str) or not _DURATION.match(value):
            _fail(name, value, "a duration such as '250ms', '30s', '15m', '24h' or '7d', or milliseconds")
        return value.strip()
    if name == "mapping" and value not in ("modulo", "rendezvous", "random"):
        _fail(name, value, "'modulo', 'rendezvous' or 'random'")
    if name == "delivery_guarantee" and value not in ("exactly-once", "at-least-once"):
        _fail(name, value, "'exactly-once' or 'at-least-once'")
    if name == "uuid_pointer" and not str(value).startswith("/"):
        _fail(name, value, "a JSON pointer such as '/_meta/uuid'")
    if not isinstance(value, str) or not value:
        _fail(name, value, "a non-empty string")
    return value


def build(table: Mapping[str, str], given: Mapping[str, object], one_of: tuple[str, ...]) -> dict[str, str]:
    """Wire options from keyword arguments: None means unset; exactly one of `one_of` is required."""
    present = [k for k in one_of if given.get(k) is not None]
    if len(present) != 1:
        raise ValueError(f"give exactly one of {', '.join(one_of)} (got {', '.join(present) or 'none'})")
    if given.get("broker") is None:
        raise ValueError("Gazette option 'broker' is required, e.g. broker='http://127.0.0.1:8080'")
    return {table[k]: _check(k, v) for k, v in given.items() if v is not None}
