"""Decoding the `value` column of messages."""


def parse_json(df, schema, column: str = "value", into: str = "message"):
    """Adds column `into` holding the ndjson `value` parsed with `schema` (a StructType or DDL)."""
    from pyspark.sql.functions import col, from_json
    return df.withColumn(into, from_json(col(column).cast("string"), schema))


def parse_protobuf(df, message_name: str, descriptor_file: str, column: str = "value", into: str = "message"):
    """Adds column `into` holding the protobuf-fixed `value` decoded as `message_name`, described
    by a descriptor set file (`protoc --descriptor_set_out`). Needs Spark's spark-protobuf
    package on the session."""
    from pyspark.sql.functions import col
    from pyspark.sql.protobuf.functions import from_protobuf
    return df.withColumn(into, from_protobuf(col(column), message_name, descFilePath=descriptor_file))
