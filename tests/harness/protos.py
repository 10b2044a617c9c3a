"""Descriptor sets for the decoding tests, built in Python (no protoc needed)."""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2

_F = descriptor_pb2.FieldDescriptorProto


def _field(m, name, number, kind, label=_F.LABEL_OPTIONAL, type_name=None, **kw):
    f = m.field.add(name=name, number=number, type=kind, label=label, **kw)
    if type_name:
        f.type_name = type_name
    return f


def event_set() -> descriptor_pb2.FileDescriptorSet:
    """`demo.Event`: the UUID in bytes field 1 (where the publisher puts it), then a field of
    each kind. Timestamp's file is included, Duration's is not: it comes from the well-known types."""
    files = descriptor_pb2.FileDescriptorSet()
    files.file.add().CopyFrom(descriptor_pb2.FileDescriptorProto.FromString(timestamp_pb2.DESCRIPTOR.serialized_pb))
    f = files.file.add(
        name="event.proto",
        package="demo",
        syntax="proto3",
        dependency=["google/protobuf/timestamp.proto", "google/protobuf/duration.proto"],
    )
    e = f.message_type.add(name="Event")
    buyer = e.nested_type.add(name="Buyer")
    _field(buyer, "id", 1, _F.TYPE_UINT64)
    _field(buyer, "email", 2, _F.TYPE_STRING)
    entry = e.nested_type.add(name="CountsEntry")
    entry.options.map_entry = True
    _field(entry, "key", 1, _F.TYPE_STRING)
    _field(entry, "value", 2, _F.TYPE_INT64)
    kind = e.enum_type.add(name="Kind")
    kind.value.add(name="SALE", number=0)
    kind.value.add(name="REFUND", number=1)
    e.oneof_decl.add(name="payment")
    e.oneof_decl.add(name="_nick")
    _field(e, "uuid", 1, _F.TYPE_BYTES)
    _field(e, "user", 2, _F.TYPE_STRING)
    _field(e, "amount", 3, _F.TYPE_SINT32)
    _field(e, "count", 4, _F.TYPE_UINT32)
    _field(e, "total", 5, _F.TYPE_FIXED64)
    _field(e, "score", 6, _F.TYPE_DOUBLE)
    _field(e, "ratio", 7, _F.TYPE_FLOAT)
    _field(e, "flag", 8, _F.TYPE_BOOL)
    _field(e, "kind", 9, _F.TYPE_ENUM, type_name=".demo.Event.Kind")
    _field(e, "tags", 10, _F.TYPE_STRING, _F.LABEL_REPEATED)
    _field(e, "counts", 11, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, ".demo.Event.CountsEntry")
    _field(e, "at", 12, _F.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp")
    _field(e, "took", 13, _F.TYPE_MESSAGE, type_name=".google.protobuf.Duration")
    _field(e, "buyer", 14, _F.TYPE_MESSAGE, type_name=".demo.Event.Buyer")
    _field(e, "card", 15, _F.TYPE_STRING, oneof_index=0)
    _field(e, "iban", 16, _F.TYPE_STRING, oneof_index=0)
    _field(e, "nick", 17, _F.TYPE_STRING, oneof_index=1, proto3_optional=True)
    _field(e, "history", 18, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, ".demo.Event.Buyer")
    return files


def event_class():
    """The generated message class of `demo.Event`."""
    pool = descriptor_pool.DescriptorPool()
    from google.protobuf import duration_pb2

    pool.AddSerializedFile(duration_pb2.DESCRIPTOR.serialized_pb)
    for f in event_set().file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("demo.Event"))


def doc_set() -> descriptor_pb2.FileDescriptorSet:
    """The judge's protobuf-fixed message: UUID, `producer-seq` and padding."""
    files = descriptor_pb2.FileDescriptorSet()
    f = files.file.add(name="doc.proto", package="judge", syntax="proto3")
    m = f.message_type.add(name="Doc")
    _field(m, "uuid", 1, _F.TYPE_BYTES)
    _field(m, "name", 2, _F.TYPE_STRING)
    _field(m, "pad", 3, _F.TYPE_STRING)
    return files
