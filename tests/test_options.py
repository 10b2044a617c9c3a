"""The Python helpers' options: one keyword per connector option, Python values converted to the
option strings, and every value checked by the connector alone, where the DataFrame is loaded
(before any broker is contacted: OptionsAtLoad only parses, so these tests need
the connector's jar and no broker).

Python once checked values too, and disagreed with the connector: it refused what the connector
accepts ("EARLIEST", "Modulo", "LATEST") and sent what the connector refuses (ending_offsets
"earliest", rpc_timeout 0 as "0ms"). One test below for each."""

import doctest
import importlib.util
import inspect
import json
import re
import zipfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from pyspark.errors import PySparkException

from conftest import assembly_jar, condition_of, option_error
from spark_gazette import options, read, read_stream, write, write_stream

NOWHERE = "http://127.0.0.1:1"  # never contacted: the options are checked first
SIDES = {"source": (options.SOURCE, (read_stream, read)), "sink": (options.SINK, (write_stream, write))}


NOT_OPTIONS = {"spark", "df", "schema", "parse_options", "mode", "options"}


def reference() -> list[dict]:
    """The connector's options reference, as its jar holds it (options.json): each option's name,
    side (source, sink, connection, parsing) and the queries that take it (stream, batch)."""
    with zipfile.ZipFile(assembly_jar()) as jar:
        return json.loads(jar.read("io/sparkgazette/spark/options/options.json"))


def jvm_options(side: str, mode: str | None = None) -> set[str]:
    """The options of one side (with the connection's), of queries of `mode` where given."""
    return {
        o["name"] for o in reference() if o["side"] in (side, "connection") and (mode is None or mode in o["modes"])
    }


def keywords(helper) -> set[str]:
    """The option keywords of a helper: its parameters but the session, the DataFrame, the
    source's schema with Spark's parsing options (which go by Spark's names), a batch write's
    save mode, and `**options`."""
    return set(inspect.signature(helper).parameters) - NOT_OPTIONS


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


def test_a_time_for_an_option_of_another_type_is_a_type_error_whatever_its_name():
    # The declaration says which options take times: the strategy's name holds "timestamp", and
    # its values are earliest, latest or error.
    at = datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(TypeError, match="starting_offsets_by_timestamp_strategy takes no times"):
        options.wire("starting_offsets_by_timestamp_strategy", at)
    assert options.wire("ending_offsets_by_timestamp", {"a": at}) == '{"a": 1767225600000}'


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


@pytest.mark.parametrize("helper", [read_stream, read, write_stream, write])
def test_options_are_keyword_only_and_any_other_goes_through_options(helper):
    params = list(inspect.signature(helper).parameters.values())
    assert [p.name for p in params[:2]] in (["spark", "broker"], ["df", "broker"])
    assert all(p.kind is p.KEYWORD_ONLY for p in params[2:-1]), helper.__name__
    assert params[-1].kind is params[-1].VAR_KEYWORD


@pytest.mark.parametrize("side", SIDES)
def test_each_helper_takes_exactly_the_options_the_connector_takes_for_its_queries(side):
    _, (stream, batch) = SIDES[side]
    for helper, mode in ((stream, "stream"), (batch, "batch")):
        assert keywords(helper) == {snake_case(o) for o in jvm_options(side, mode)}, helper.__name__


def test_options_pass_through_by_the_connectors_name_or_the_keywords():
    given = {"broker": "b", "journals": ["a"]}
    extra = {"maxBytesPerTrigger": 1024, "fail_on_data_loss": False, "somethingNew": "x", "unset": None}
    assert options.build(options.SOURCE, given, extra) == {
        "broker": "b",
        "journals": "a",
        "maxBytesPerTrigger": "1024",
        "failOnDataLoss": "false",
        "somethingNew": "x",
    }
    with pytest.raises(TypeError, match="option journals is given twice"):
        options.build(options.SOURCE, given, {"journals": "b"})


def test_the_package_says_its_version():
    import spark_gazette
    from spark_gazette._version import VERSION

    assert spark_gazette.__version__ == VERSION and re.fullmatch(r"\d+\.\d+\.\d+.*", VERSION)


def test_an_option_by_the_connectors_name_reaches_it_and_an_unknown_one_is_refused_naming_it(spark):
    df = read_stream(spark, broker=NOWHERE, journals="a", maxBytesPerTrigger="1024", minPartitions=2)
    assert df.isStreaming
    option_error(
        lambda: read(spark, broker=NOWHERE, journals="a", maxBytesPerTriger=1),
        "GAZETTE_UNKNOWN_OPTION",
        "maxBytesPerTriger",
    )


def test_a_batch_write_other_than_append_is_refused(spark):
    rows = spark.range(1).selectExpr("CAST(id AS STRING) AS value")
    with pytest.raises(PySparkException) as e:
        write(rows, broker=NOWHERE, journal="a", mode="overwrite")
    assert condition_of(e.value) == "GAZETTE_UNSUPPORTED_OUTPUT_MODE", str(e.value)


def test_the_tables_are_the_connectors_option_names():
    assert set(options.SOURCE.values()) == jvm_options("source")
    assert set(options.SINK.values()) == jvm_options("sink")
    assert set(options.CONNECTION.values()) == {o["name"] for o in reference() if o["side"] == "connection"}


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
    assert {o["name"] for o in reference() if o["side"] == "parsing"} >= {"timestampFormat", "dateFormat"}


def test_a_parse_option_spark_does_not_take_here_is_refused_naming_it(spark):
    option_error(
        lambda: read(spark, broker=NOWHERE, journals="a", schema="user STRING", parse_options={"multiLine": True}),
        "GAZETTE_UNKNOWN_OPTION",
        "multiLine",
    )


def test_sparks_own_writer_options_pass_as_spark_spells_them_and_a_near_miss_is_refused_naming_it(spark, tmp_path):
    """Spark reads asyncProgressTrackingEnabled and its siblings from a writer's options, which the
    sink is given too: the connector lets them through (they once failed as unknown options), in
    any capitals (under Spark Connect it is handed them in lower case), and refuses a misspelling,
    suggesting Spark's name."""
    rows = spark.readStream.format("rate").load().selectExpr("CAST(value AS STRING) AS value")
    sink = {"broker": NOWHERE, "journal": "a", "checkpoint_location": str(tmp_path)}
    # Every one Spark hands a sink, as declared, with a value Spark takes.
    values = {"boolean": False, "integer": 1000, "string": "copies"}
    spark_options = {
        o["name"]: values[o["type"]] for o in reference() if o["side"] == "spark" and "sink" in o["givenTo"]
    }
    assert "asyncProgressTrackingEnabled" in spark_options
    assert write_stream(rows, **sink, **spark_options) is not None
    assert (
        write_stream(
            rows,
            broker=NOWHERE,
            selector="prefix=out/",
            checkpoint_location=str(tmp_path),
            asyncProgressTrackingEnabled=True,
        )
        is not None
    )
    assert write_stream(rows, **sink, asyncprogresstrackingenabled=False) is not None
    near = "asyncProgressTrackingEnable"
    e = option_error(lambda: write_stream(rows, **sink, **{near: False}), "GAZETTE_UNKNOWN_OPTION", near)
    assert "Did you mean 'asyncProgressTrackingEnabled'?" in str(e), str(e)
    option_error(
        lambda: read_stream(spark, broker=NOWHERE, journals="a", asyncProgressTrackingEnabled=False),
        "GAZETTE_UNKNOWN_OPTION",
        "asyncProgressTrackingEnabled",
    )


def _generator():
    """The helpers' generator (python/generate_helpers.py, which the package's build runs), as a
    module: not part of the package, so loaded from its file."""
    path = Path(__file__).resolve().parents[1] / "python" / "generate_helpers.py"
    spec = importlib.util.spec_from_file_location("generate_helpers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The Python annotation of each declared type, as the generator gives it.
ANNOTATIONS = _generator().ANNOTATIONS


@pytest.mark.parametrize(
    "helper, side, mode",
    [
        (read_stream, "source", "stream"),
        (read, "source", "batch"),
        (write_stream, "sink", "stream"),
        (write, "sink", "batch"),
    ],
)
def test_each_keyword_is_typed_and_documented_as_the_connector_declares_its_option(helper, side, mode):
    """The helpers are generated from the connector's declaration (options.json, the one its jar
    checks names against): each keyword carries its option's declared type and its docstring
    says what the declaration says, with the default."""
    params = inspect.signature(helper).parameters
    doc = " ".join(helper.__doc__.split())
    declared = [o for o in reference() if o["side"] in (side, "connection") and mode in o["modes"]]
    assert declared
    for o in declared:
        k = snake_case(o["name"])
        assert params[k].annotation == f"{ANNOTATIONS[o['type']]} | None", (k, params[k].annotation)
        assert params[k].default is None and (k == "broker" or params[k].kind is inspect.Parameter.KEYWORD_ONLY)
        entry = f"{k} : {ANNOTATIONS[o['type']].replace(' | ', ' or ')}, optional {o['doc']} Default: {o['default']}."
        assert " ".join(entry.split()) in doc, k
    # Spark's own options get no keyword; the docstring names those Spark hands this side.
    for o in reference():
        if o["side"] == "spark":
            assert snake_case(o["name"]) not in params
            assert (f"`{o['name']}`" in doc) == (side in o["givenTo"] and mode in o["modes"]), o["name"]
