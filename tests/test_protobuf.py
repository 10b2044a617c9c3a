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


# Every field type protobuf has (proto2's groups aside, which proto3 has not and neither decoder
# takes), at its extremes, once alone and once repeated: the Python twin exists for Spark Connect,
# where the JVM's decoder cannot be reached, and must read each as the JVM does.
EXTREMES = {
    "TYPE_DOUBLE": [1.7976931348623157e308, -0.5],
    "TYPE_FLOAT": [0.25, -3.5],
    "TYPE_INT64": [-(2**63), 2**63 - 1],
    "TYPE_UINT64": [2**64 - 1, 0],
    "TYPE_INT32": [-(2**31), 2**31 - 1],
    "TYPE_FIXED64": [2**64 - 1, 1],
    "TYPE_FIXED32": [2**32 - 1, 1],
    "TYPE_BOOL": [True, False],
    "TYPE_STRING": ["ü€", ""],
    "TYPE_MESSAGE": [{"name": "a"}, {}],
    "TYPE_BYTES": [b"\x00\xff", b""],
    "TYPE_UINT32": [2**32 - 1, 0],
    "TYPE_ENUM": [1, 0],
    "TYPE_SFIXED32": [-(2**31), 2**31 - 1],
    "TYPE_SFIXED64": [-(2**63), 2**63 - 1],
    "TYPE_SINT32": [-(2**31), 2**31 - 1],
    "TYPE_SINT64": [-(2**63), 2**63 - 1],
}


def test_the_jvm_and_python_engines_decode_every_field_type_alike(spark, tmp_path):
    from google.protobuf import descriptor_pb2, message_factory

    from spark_gazette import parse_protobuf
    from spark_gazette.protobuf_rows import message_descriptor

    field = descriptor_pb2.FieldDescriptorProto
    every = {name for name in field.Type.keys() if name != "TYPE_GROUP"}
    assert every == EXTREMES.keys(), f"protobuf's field types changed: {sorted(every ^ EXTREMES.keys())}"
    files = descriptor_pb2.FileDescriptorSet()
    f = files.file.add(name="all.proto", package="all", syntax="proto3")
    m = f.message_type.add(name="All")
    m.nested_type.add(name="Inner").field.add(name="name", number=1, type=field.TYPE_STRING)
    m.enum_type.add(name="Kind").value.extend(
        [descriptor_pb2.EnumValueDescriptorProto(name=n, number=i) for i, n in enumerate(["NONE", "SOME"])]
    )
    refs = {"TYPE_MESSAGE": ".all.All.Inner", "TYPE_ENUM": ".all.All.Kind"}
    for i, kind in enumerate(sorted(EXTREMES)):
        for j, label in enumerate((field.LABEL_OPTIONAL, field.LABEL_REPEATED)):
            added = m.field.add(
                name=f"{kind[5:].lower()}{'_list' if j else ''}", number=2 * i + j + 1, type=field.Type.Value(kind)
            )
            added.label = label
            if kind in refs:
                added.type_name = refs[kind]
    desc = tmp_path / "all.desc"
    desc.write_bytes(files.SerializeToString())
    All = message_factory.GetMessageClass(message_descriptor(files.SerializeToString(), "all.All", str(desc)))

    def message(k: int) -> bytes:
        out = All()
        for kind, values in EXTREMES.items():
            name = kind[5:].lower()
            if kind == "TYPE_MESSAGE":
                getattr(out, name).CopyFrom(All.Inner(**values[k]))
                getattr(out, name + "_list").extend([All.Inner(**v) for v in values])
            else:
                setattr(out, name, values[k])
                getattr(out, name + "_list").extend(values)
        return out.SerializeToString()

    df = spark.createDataFrame([(bytearray(message(0)),), (bytearray(message(1)),), (bytearray(b""),)], "value BINARY")
    decoded = {
        engine: parse_protobuf(df, "all.All", str(desc), engine=engine).select("message")
        for engine in ("jvm", "python")
    }
    assert decoded["jvm"].schema == decoded["python"].schema
    jvm, py = ([r.asDict(recursive=True) for r in d.collect()] for d in decoded.values())
    assert len(jvm) == 3 and jvm[0]["message"]["sint64"] == -(2**63), jvm
    assert jvm == py
