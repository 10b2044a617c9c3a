"""The Python helpers' options: one keyword per connector option, Python values converted to the
option strings, and every value checked by the connector alone, where the DataFrame is loaded
(before any broker is contacted: GazetteOptions.validateAtLoad only parses, so these tests need
the connector's jar and no broker).

Python once checked values too, and disagreed with the connector: it refused what the connector
accepts ("EARLIEST", "Modulo", "LATEST") and sent what the connector refuses (ending_offsets
"earliest", rpc_timeout 0 as "0ms"). One test below for each."""

import doctest
import inspect
import re
from datetime import UTC, datetime, timedelta, timezone

import pytest

from conftest import option_error
from spark_gazette import options, read, read_stream, write, write_stream

NOWHERE = "http://127.0.0.1:1"  # never contacted: the options are checked first
SIDES = {"source": (options.SOURCE, (read_stream, read)), "sink": (options.SINK, (write_stream, write))}


def keywords(helper) -> set[str]:
    """The option keywords of a helper: its parameters but the session, the DataFrame, and the
    source's schema with Spark's parsing options (which go by Spark's names)."""
    return set(inspect.signature(helper).parameters) - {"spark", "df", "schema", "parse_options"}


def snake_case(option: str) -> str:
    return re.sub("([A-Z])", r"_\1", option).lower()


def test_python_values_become_the_strings_the_connector_reads():
    at = datetime(2026, 1, 1, 1, tzinfo=timezone(timedelta(hours=1)))  # 2026-01-01T00:00Z
    assert options.wire("read_committed", False) == "false"
    assert options.wire("starting_timestamp", at) == "1767225600000"
    assert options.wire("starting_offsets_by_timestamp", {"a": at, "b": 5}) == '{"a": 1767225600000, "b": 5}'
    assert options.wire("starting_offsets", {"a": -2}) == '{"a": -2}'
    assert options.wire("journals", ["a", "b"]) == options.wire("journals", ("a", "b")) == "a,b"
    assert options.wire("max_trigger_delay", timedelta(minutes=15)) == "900000ms"
    assert options.wire("rpc_timeout", 0) == "0"  # a bare number is milliseconds to the connector
    for text in ("EARLIEST", " 30s ", "", "not checked here"):
        assert options.wire("starting_offsets", text) == text
    assert options.wire("auth_token", b"a.b.c") == "a.b.c"  # bytes as the text they hold, never their repr


def test_a_time_where_offsets_are_expected_is_a_type_error():
    # Converted, it would read as a byte offset and fail far from here ("past its write head").
    at = datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(TypeError, match="starting_offsets takes no times"):
        options.wire("starting_offsets", {"a": at})
    with pytest.raises(TypeError, match="ending_offsets takes no times"):
        options.wire("ending_offsets", at)


def test_a_naive_datetime_is_a_type_error_naming_the_keyword():
    with pytest.raises(TypeError, match="starting_timestamp: a naive datetime"):
        options.wire("starting_timestamp", datetime(2026, 1, 1))
    with pytest.raises(TypeError, match="ending_offsets_by_timestamp: a naive datetime"):
        options.wire("ending_offsets_by_timestamp", {"a": datetime(2026, 1, 1)})


def test_the_docstring_examples_of_options_run():
    assert doctest.testmod(options).failed == 0


def test_each_keyword_is_the_snake_case_of_its_option():
    for table in (options.SOURCE, options.SINK, options.CONNECTION):
        assert {k: snake_case(v) for k, v in table.items()} == {k: k for k in table}


@pytest.mark.parametrize("side", SIDES)
def test_the_helpers_take_their_sides_keywords_and_every_one_of_them(side):
    table, helpers = SIDES[side]
    for helper in helpers:
        assert keywords(helper) <= table.keys(), f"{helper.__name__}: {keywords(helper) - table.keys()}"
    assert set().union(*map(keywords, helpers)) == table.keys()


def test_the_tables_are_the_connectors_option_names(spark):
    jvm = spark._jvm.io.sparkgazette.spark.GazetteOptions
    assert set(options.SOURCE.values()) == set(jvm.sourceOptionNames())
    assert set(options.SINK.values()) == set(jvm.sinkOptionNames())
    assert set(options.CONNECTION.values()) == set(jvm.connectionOptionNames())


def test_starting_offsets_earliest_in_capitals_is_accepted(spark):
    assert read_stream(spark, broker=NOWHERE, journals="a", starting_offsets="EARLIEST").isStreaming


def test_mapping_modulo_capitalized_is_accepted(spark, tmp_path):
    from pyspark.sql.streaming import DataStreamWriter

    rows = spark.readStream.format("rate").load().selectExpr("CAST(value AS STRING) AS value")
    writer = write_stream(
        rows, broker=NOWHERE, selector="prefix=a/", mapping="Modulo", checkpoint_location=str(tmp_path / "ckpt")
    )
    assert isinstance(writer, DataStreamWriter)  # not started: that would contact the broker


def test_starting_offsets_by_timestamp_strategy_latest_in_capitals_is_accepted(spark):
    df = read_stream(
        spark,
        broker=NOWHERE,
        journals="a",
        starting_timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        starting_offsets_by_timestamp_strategy="LATEST",
    )
    assert df.isStreaming


def test_ending_offsets_earliest_is_refused_naming_the_option(spark):
    option_error(
        lambda: read(spark, broker=NOWHERE, journals="a", ending_offsets="earliest"),
        "GAZETTE_INVALID_OPTION",
        "endingOffsets",
        "earliest",
    )


def test_rpc_timeout_zero_is_refused_naming_the_option(spark):
    option_error(
        lambda: read(spark, broker=NOWHERE, journals="a", rpc_timeout=0), "GAZETTE_INVALID_OPTION", "rpcTimeout", "0"
    )


def test_schema_types_the_rows_and_parse_options_go_by_sparks_names(spark):
    df = read(
        spark,
        broker=NOWHERE,
        journals="a",
        schema="user STRING, amount INT",
        parse_options={"timestampFormat": "dd/MM/yyyy HH:mm", "allowComments": True},
    )
    assert df.schema.fieldNames() == ["user", "amount", "_gazette"]
    assert "journal" in df.schema["_gazette"].dataType.fieldNames()
    stream = read_stream(spark, broker=NOWHERE, journals="a", schema="user STRING")
    assert stream.schema.fieldNames() == ["user", "_gazette"]
    assert set(spark._jvm.io.sparkgazette.spark.GazetteOptions.parsingOptionNames()) >= {
        "timestampFormat",
        "dateFormat",
    }


def test_a_parse_option_spark_does_not_take_here_is_refused_naming_it(spark):
    option_error(
        lambda: read(spark, broker=NOWHERE, journals="a", schema="user STRING", parse_options={"multiLine": True}),
        "GAZETTE_UNKNOWN_OPTION",
        "multiLine",
    )
