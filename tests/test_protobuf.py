"""Decoding protobuf-fixed journals: the connector's JVM decoder and its Python twin read the
same messages into the same rows, and a payload that does not parse is named by journal and
offset (or is null when asked)."""

import datetime
import uuid as uuidlib
from decimal import Decimal

import pytest

from conftest import requires_local_binaries
from protos import event_class, event_set
from specs import journal_tree

pytestmark = requires_local_binaries

JOURNAL = "proto/events"


def samples():
    Event = event_class()
    utc = datetime.UTC
    full = Event(
        user="ada",
        amount=-(2**31),
        count=2**32 - 1,
        total=2**64 - 1,
        score=2.5,
        ratio=0.25,
        flag=True,
        kind=1,
        tags=["a", "b"],
        counts={"x": 3, "y": -4},
        buyer=Event.Buyer(id=2**63, email="a@b"),
        nick="",
        card="4111",
        history=[Event.Buyer(id=1), Event.Buyer(id=2)],
    )
    full.at.FromDatetime(datetime.datetime(2026, 11, 22, 8, 30, 1, 250000, tzinfo=utc))
    full.took.FromTimedelta(datetime.timedelta(seconds=-1, microseconds=-500000))
    unknown_enum = Event(user="bob", kind=7, iban="DE00")
    return [Event(), full, unknown_enum] + [Event(user=f"u{i}", amount=i, at={"seconds": i}) for i in range(20)]


@pytest.fixture(scope="module")
def published(cluster, spark, tmp_path_factory):
    from spark_gazette import admin

    admin.apply_specs(spark, cluster.broker, journal_tree("proto/", {"events": "application/x-protobuf-fixed"}))
    # The last payload is not a demo.Event: field 2 is a string holding invalid UTF-8.
    admin.publish(spark, cluster.broker, JOURNAL, [m.SerializeToString() for m in samples()] + [b"\x12\x02\xff\xfe"])
    desc = tmp_path_factory.mktemp("proto") / "event.desc"
    desc.write_bytes(event_set().SerializeToString())
    return str(desc)


def decoded(spark, cluster, desc, engine, mode="PERMISSIVE"):
    from spark_gazette import parse_protobuf, read

    df = parse_protobuf(
        read(spark, broker=cluster.broker, journals=JOURNAL), "demo.Event", desc, engine=engine, mode=mode
    )
    return df.schema["message"].dataType, [
        r.asDict(recursive=True) for r in df.orderBy("begin").select("begin", "uuid", "message").collect()
    ]


def test_the_jvm_and_python_engines_give_the_same_schema_and_rows(cluster, spark, published):
    jvm_schema, jvm = decoded(spark, cluster, published, "jvm")
    py_schema, py = decoded(spark, cluster, published, "python")
    assert jvm_schema == py_schema
    assert len(jvm) == len(samples()) + 1
    assert jvm == py


def test_values_follow_the_documented_mapping(cluster, spark, published):
    _, rows = decoded(spark, cluster, published, "auto")
    empty, full, unknown = (r["message"] for r in rows[:3])
    # Unset: presence-tracking fields are null, the others have protobuf's defaults.
    assert empty["user"] == "" and empty["count"] == 0 and empty["total"] == Decimal(0) and empty["kind"] == "SALE"
    assert empty["tags"] == [] and empty["counts"] == {}
    assert all(empty[k] is None for k in ("at", "took", "buyer", "card", "iban", "nick"))
    # Unsigned integers keep their values; enums are names; maps, timestamps, durations.
    assert (full["amount"], full["count"], full["total"]) == (-(2**31), 2**32 - 1, Decimal(2**64 - 1))
    assert full["buyer"] == {"id": Decimal(2**63), "email": "a@b"}
    assert (full["score"], full["ratio"], full["flag"], full["kind"]) == (2.5, 0.25, True, "REFUND")
    assert full["tags"] == ["a", "b"] and full["counts"] == {"x": 3, "y": -4}
    assert full["at"].astimezone(datetime.UTC) == datetime.datetime(2026, 11, 22, 8, 30, 1, 250000, tzinfo=datetime.UTC)
    assert full["took"] == datetime.timedelta(seconds=-1.5)
    assert (full["nick"], full["card"], full["iban"]) == ("", "4111", None)
    assert [b["id"] for b in full["history"]] == [1, 2]
    assert unknown["kind"] == "UNKNOWN_ENUM_VALUE_Kind_7" and unknown["iban"] == "DE00" and unknown["card"] is None
    # The UUID the publisher wrote into field 1 is the row's UUID.
    assert all(str(uuidlib.UUID(bytes=bytes(r["message"]["uuid"]))) == r["uuid"] for r in rows[:-1])
    # PERMISSIVE: the one bad payload is null, and only it.
    assert [r["message"] is None for r in rows] == [False] * (len(rows) - 1) + [True]


@pytest.mark.parametrize("engine", ["jvm", "python"])
def test_a_payload_that_does_not_parse_fails_naming_journal_and_offset(cluster, spark, published, engine):
    _, rows = decoded(spark, cluster, published, engine)
    bad = rows[-1]["begin"]
    with pytest.raises(Exception) as e:
        decoded(spark, cluster, published, engine, mode="FAILFAST")
    assert f"Message at offset {bad} of journal {JOURNAL} is not a valid demo.Event" in str(e.value)


@pytest.mark.parametrize("engine", ["jvm", "python"])
def test_an_unknown_message_name_lists_what_the_set_holds(cluster, spark, published, engine):
    from spark_gazette import parse_protobuf, read

    with pytest.raises(Exception) as e:
        parse_protobuf(read(spark, broker=cluster.broker, journals=JOURNAL), "demo.Evnt", published, engine=engine)
    assert "has no message 'demo.Evnt'" in str(e.value)
    assert "It holds: demo.Event, demo.Event.Buyer, google.protobuf.Timestamp" in str(e.value)


def test_engine_and_mode_are_checked_in_python(spark):
    from spark_gazette import parse_protobuf

    df = spark.range(1)
    with pytest.raises(ValueError, match="engine must be one of auto, jvm, python, spark, sql, not 'fast'"):
        parse_protobuf(df, "demo.Event", "x.desc", engine="fast")
    with pytest.raises(ValueError, match="mode must be FAILFAST or PERMISSIVE, not 'lenient'"):
        parse_protobuf(df, "demo.Event", "x.desc", mode="lenient")
