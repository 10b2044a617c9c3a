"""The Python twin of the connector's `io.sparkgazette.spark.protobuf`: the same schema and the
same values, for `parse_protobuf(engine="python")`, which runs where the JVM cannot be reached
(Spark Connect). Keep the two in step; tests compare them row for row."""

import datetime
import decimal

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_TIMESTAMP = "google.protobuf.Timestamp"
_DURATION = "google.protobuf.Duration"


def message_descriptor(descriptor_set: bytes, message_name: str, source: str):
    """The message `message_name` (full name, or a simple name only one message has) of a
    serialized FileDescriptorSet; imports it lacks are taken from protobuf's well-known types."""
    from google.protobuf import descriptor_pb2, descriptor_pool

    try:
        files = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set)
    except Exception as e:
        raise ValueError(f"Protobuf descriptor set {source} cannot be used: it is not a FileDescriptorSet ({e})") from e
    pool = descriptor_pool.DescriptorPool()
    held = {f.name for f in files.file}
    well_known = _well_known()
    for name in sorted({d for f in files.file for d in f.dependency} - held):
        if name not in well_known:
            raise ValueError(
                f"Protobuf descriptor set {source} cannot be used: it imports {name}, which the set "
                "does not hold; write the set with protoc's --include_imports"
            )
        pool.AddSerializedFile(well_known[name])
    pending = list(files.file)
    while pending:  # dependencies first
        ready = [f for f in pending if all(d not in {p.name for p in pending} for d in f.dependency)]
        if not ready:
            raise ValueError(f"Protobuf descriptor set {source} cannot be used: its files import each other in a cycle")
        for f in ready:
            pool.Add(f)
            pending.remove(f)

    def walk(ds):
        for d in ds:
            if not d.GetOptions().map_entry:
                yield d
            yield from walk(d.nested_types)

    messages = [d for f in files.file for d in walk(pool.FindFileByName(f.name).message_types_by_name.values())]
    wanted = message_name.lstrip(".")
    found = [d for d in messages if d.full_name == wanted] or [d for d in messages if d.name == wanted]
    if len(found) != 1:
        raise ValueError(
            f"Protobuf descriptor set {source} has no message '{message_name}' (or several of that "
            f"simple name). It holds: {', '.join(sorted(d.full_name for d in messages)) or 'none'}"
        )
    return found[0]


def _well_known():
    from google.protobuf import (
        any_pb2,
        duration_pb2,
        empty_pb2,
        field_mask_pb2,
        struct_pb2,
        timestamp_pb2,
        wrappers_pb2,
    )

    return {
        m.DESCRIPTOR.name: m.DESCRIPTOR.serialized_pb
        for m in (any_pb2, duration_pb2, empty_pb2, field_mask_pb2, struct_pb2, timestamp_pb2, wrappers_pb2)
    }


def _repeated(f):
    r = getattr(f, "is_repeated", None)
    return r if isinstance(r, bool) else f.label == f.LABEL_REPEATED


def _has_presence(f):
    p = getattr(f, "has_presence", None)
    if isinstance(p, bool):
        return p
    return (
        f.type == f.TYPE_MESSAGE
        or f.containing_oneof is not None
        or f.label == f.LABEL_OPTIONAL
        and f.file.syntax == "proto2"
    )


def _is_map(f):
    return f.type == f.TYPE_MESSAGE and f.message_type.GetOptions().map_entry


def schema_of(message):
    """The StructType of `message`, as ProtobufSchema.of gives it."""
    return _struct(message, [message.full_name])


def _struct(message, path):
    from pyspark.sql import types as T

    return T.StructType([T.StructField(f.name, _field(f, path)) for f in message.fields])


def _field(f, path):
    from pyspark.sql import types as T

    if _is_map(f):
        entry = f.message_type
        return T.MapType(_single(entry.fields_by_number[1], path), _single(entry.fields_by_number[2], path))
    if _repeated(f):
        return T.ArrayType(_single(f, path), containsNull=False)
    return _single(f, path)


def _single(f, path):
    from pyspark.sql import types as T

    t = f.type
    if t in (f.TYPE_INT32, f.TYPE_SINT32, f.TYPE_SFIXED32):
        return T.IntegerType()
    if t in (f.TYPE_UINT32, f.TYPE_FIXED32, f.TYPE_INT64, f.TYPE_SINT64, f.TYPE_SFIXED64):
        return T.LongType()
    if t in (f.TYPE_UINT64, f.TYPE_FIXED64):
        return T.DecimalType(20, 0)
    simple = {
        f.TYPE_FLOAT: T.FloatType(),
        f.TYPE_DOUBLE: T.DoubleType(),
        f.TYPE_BOOL: T.BooleanType(),
        f.TYPE_STRING: T.StringType(),
        f.TYPE_ENUM: T.StringType(),
        f.TYPE_BYTES: T.BinaryType(),
    }
    if t in simple:
        return simple[t]
    name = f.message_type.full_name
    if name == _TIMESTAMP:
        return T.TimestampType()
    if name == _DURATION:
        return T.DayTimeIntervalType()
    if name in path:
        raise ValueError(
            f"Protobuf message field {f.full_name} makes the message recursive "
            f"({' -> '.join(path + [name])}), and a recursive message has no Spark schema"
        )
    return _struct(f.message_type, path + [name])


def row_converter(message):
    """A function from a parsed message of `message` to a dict row of `schema_of(message)`."""
    fields = [(f.name, _converter(f), not _repeated(f) and _has_presence(f)) for f in message.fields]

    def convert(m):
        return {name: None if present and not m.HasField(name) else c(getattr(m, name)) for name, c, present in fields}

    return convert


def _converter(f):
    if _is_map(f):
        k, v = (
            _single_converter(f.message_type.fields_by_number[1]),
            _single_converter(f.message_type.fields_by_number[2]),
        )
        return lambda value: {k(key): v(value[key]) for key in value}
    if _repeated(f):
        one = _single_converter(f)
        return lambda value: [one(x) for x in value]
    return _single_converter(f)


def _single_converter(f):
    t = f.type
    if t in (f.TYPE_UINT64, f.TYPE_FIXED64):
        return decimal.Decimal
    if t == f.TYPE_ENUM:
        names = {v.number: v.name for v in f.enum_type.values}
        return lambda n: names.get(n, f"UNKNOWN_ENUM_VALUE_{f.enum_type.name}_{n}")
    if t == f.TYPE_BYTES:
        return bytes
    if t == f.TYPE_MESSAGE:
        name = f.message_type.full_name
        if name == _TIMESTAMP:
            return lambda m: _EPOCH + _micros(m)
        if name == _DURATION:
            return _micros
        return row_converter(f.message_type)
    return lambda v: v


def _micros(m):
    # Whole microseconds rounded down, as Spark turns a java.time Instant or Duration into micros.
    return datetime.timedelta(microseconds=(m.seconds * 1_000_000_000 + m.nanos) // 1000)
