"""Decoding the `value` column of messages."""


def parse_json(df, schema, column: str = "value", into: str = "message"):
    """Adds column `into` holding the ndjson `value` parsed with `schema` (a StructType or DDL)."""
    from pyspark.sql.functions import col, from_json
    return df.withColumn(into, from_json(col(column).cast("string"), schema))


def parse_protobuf(df, message_name: str, descriptor_file: str, column: str = "value", into: str = "message",
                   engine: str = "spark"):
    """Adds column `into` holding the protobuf-fixed `value` decoded as `message_name` (e.g.
    "demo.Event"), described by a descriptor set file (`protoc --descriptor_set_out`).

    engine="spark" uses Spark's `from_protobuf`, which needs the spark-protobuf package on the
    session (`spark.jars.packages=org.apache.spark:spark-protobuf_2.13:<spark version>`).
    engine="python" decodes in a Python UDF with the `protobuf` package (needed on the workers):
    slower, but it needs nothing else on the cluster and works under Spark Connect too.
    """
    from pyspark.sql.functions import col
    if engine == "spark":
        from pyspark.sql.protobuf.functions import from_protobuf
        return df.withColumn(into, from_protobuf(col(column), message_name, descFilePath=descriptor_file))
    if engine != "python":
        raise ValueError(f"engine must be 'spark' or 'python', not {engine!r}")

    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from google.protobuf.json_format import MessageToDict
    from pyspark.sql.functions import udf

    with open(descriptor_file, "rb") as f:
        files = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in files.file:
        pool.Add(fd)
    descriptor = pool.FindMessageTypeByName(message_name)
    schema = _struct_of(descriptor)
    raw = files.SerializeToString()

    def decode(b):
        if b is None:
            return None
        # Built per call from bytes: UDFs run in other processes, where the pool must be rebuilt.
        local = descriptor_pool.DescriptorPool()
        for fd in descriptor_pb2.FileDescriptorSet.FromString(raw).file:
            local.Add(fd)
        cls = message_factory.GetMessageClass(local.FindMessageTypeByName(message_name))
        return _row_of(cls.FromString(bytes(b)))

    return df.withColumn(into, udf(decode, schema)(col(column)))


def _struct_of(descriptor):
    from google.protobuf.descriptor import FieldDescriptor as F
    from pyspark.sql import types as T
    scalars = {F.TYPE_DOUBLE: T.DoubleType(), F.TYPE_FLOAT: T.FloatType(), F.TYPE_INT64: T.LongType(),
               F.TYPE_UINT64: T.LongType(), F.TYPE_INT32: T.IntegerType(), F.TYPE_FIXED64: T.LongType(),
               F.TYPE_FIXED32: T.IntegerType(), F.TYPE_BOOL: T.BooleanType(), F.TYPE_STRING: T.StringType(),
               F.TYPE_BYTES: T.BinaryType(), F.TYPE_UINT32: T.IntegerType(), F.TYPE_ENUM: T.StringType(),
               F.TYPE_SFIXED32: T.IntegerType(), F.TYPE_SFIXED64: T.LongType(), F.TYPE_SINT32: T.IntegerType(),
               F.TYPE_SINT64: T.LongType()}
    fields = []
    for f in descriptor.fields:
        t = _struct_of(f.message_type) if f.type == F.TYPE_MESSAGE else scalars[f.type]
        repeated = getattr(f, "is_repeated", None)
        repeated = repeated if isinstance(repeated, bool) else f.label == F.LABEL_REPEATED
        fields.append(T.StructField(f.name, T.ArrayType(t) if repeated else t))
    return T.StructType(fields)


def _row_of(message):
    from google.protobuf.descriptor import FieldDescriptor as F
    out = {}
    for f in message.DESCRIPTOR.fields:
        value = getattr(message, f.name)
        convert = (_row_of if f.type == F.TYPE_MESSAGE
                   else (lambda v, f=f: f.enum_type.values_by_number[v].name) if f.type == F.TYPE_ENUM
                   else (lambda v: bytes(v)) if f.type == F.TYPE_BYTES else (lambda v: v))
        repeated = getattr(f, "is_repeated", None)
        repeated = repeated if isinstance(repeated, bool) else f.label == F.LABEL_REPEATED
        out[f.name] = [convert(v) for v in value] if repeated else convert(value)
    return out
