"""The connector's options from Python values: each keyword's option name (snake_case here,
camelCase on the wire), and each Python value as the string the connector reads.

Nothing here checks a value: the connector does, where the DataFrame is loaded, and its error
names the option as `docs/options.md` lists it (condition GAZETTE_INVALID_OPTION and others).
One place decides what a value may be, so Python and the JVM cannot disagree about it.

    >>> from datetime import datetime, timezone
    >>> build(SOURCE, {"broker": "http://127.0.0.1:8080", "journals": ["a", "b"], "selector": None,
    ...                "starting_timestamp": datetime(2026, 1, 1, tzinfo=timezone.utc)})
    {'broker': 'http://127.0.0.1:8080', 'journals': 'a,b', 'startingTimestamp': '1767225600000'}
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Union

# Each side's option keywords (snake_case) and the options they stand for, generated from the
# connector's declaration of its options (options.json) when the package is built.
from spark_gazette._declaration import CONNECTION, SINK, SOURCE, TIMES

__all__ = ["CONNECTION", "SINK", "SOURCE", "Duration", "Offsets", "Timestamp", "build", "wire"]

Offsets = Union[str, Mapping[str, int]]
"""'earliest', 'latest', or offsets by journal name (-2 earliest, -1 latest)."""
Timestamp = Union[int, datetime]
"""Milliseconds since 1970-01-01T00:00:00Z, or a timezone-aware datetime."""
Duration = Union[str, int, timedelta]
"""'250ms', '30s', '15m', '24h', '7d', milliseconds, or a timedelta (sent in milliseconds)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MILLISECOND = timedelta(milliseconds=1)


def build(
    table: Mapping[str, str], given: Mapping[str, object], extra: Mapping[str, object] | None = None
) -> dict[str, str]:
    """The wire options of keyword arguments: `table` names each, None leaves it unset. `extra`
    are options passed on as named (`**options`): a keyword of `table` by that name or its
    option's, anything else as it is, for the connector to accept or refuse naming it.

        >>> build(SOURCE, {"broker": "b"}, {"maxBytesPerTrigger": 1024, "fail_on_data_loss": False})
        {'broker': 'b', 'maxBytesPerTrigger': '1024', 'failOnDataLoss': 'false'}
    """
    wired = {table[k]: wire(k, v) for k, v in given.items() if v is not None}
    keywords = {option: keyword for keyword, option in table.items()}
    for name, value in (extra or {}).items():
        option = table.get(name, name)
        if value is None:
            continue
        if option in wired:
            raise TypeError(f"option {option} is given twice (as {keywords.get(option, option)} and {name})")
        wired[option] = wire(keywords.get(option, name), value)
    return wired


def wire(keyword: str, value: object) -> str:
    """The string the connector reads for a Python value: the type decides, never the option,
    so the same value reads the same wherever it is given.

        >>> wire("include_labels", True), wire("journals", ("a", "b")), wire("max_trigger_delay", 250)
        ('true', 'a,b', '250')
        >>> wire("rpc_timeout", timedelta(seconds=30)), wire("starting_offsets", {"a": -2, "b": 1024})
        ('30000ms', '{"a": -2, "b": 1024}')
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode()
    if isinstance(value, bool):  # before int: a bool is an int
        return "true" if value else "false"
    if isinstance(value, datetime):
        return str(_millis(keyword, value))
    if isinstance(value, timedelta):
        return f"{value // _MILLISECOND}ms"
    if isinstance(value, Mapping):
        return json.dumps({str(k): _json(keyword, v) for k, v in value.items()})
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        return ",".join(str(v) for v in value)
    return str(value)  # an int (a bare number of milliseconds for a duration), a path, ...


def _json(keyword: str, value: object) -> object:
    """A value inside a JSON option: offsets as they are, times as milliseconds since 1970."""
    return _millis(keyword, value) if isinstance(value, datetime) else value


def _millis(keyword: str, value: datetime) -> int:
    """Milliseconds since 1970 of an aware datetime, for an option that takes times. A naive one
    names no instant: which time zone it meant is a question only the caller can answer, so it is
    refused here; and a time where offsets are expected would read as a byte offset."""
    if keyword not in TIMES:
        raise TypeError(
            f"{keyword} takes no times ({value.isoformat()}); to start or end at a time, use "
            "starting_timestamp, starting_offsets_by_timestamp, ending_timestamp or ending_offsets_by_timestamp"
        )
    if value.tzinfo is None:
        raise TypeError(
            f"{keyword}: a naive datetime ({value.isoformat()}) names no instant; give a timezone-aware one, "
            "e.g. datetime(2026, 1, 1, tzinfo=timezone.utc), or milliseconds since 1970"
        )
    return (value - _EPOCH) // _MILLISECOND
