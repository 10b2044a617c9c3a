"""Error conditions through PySpark: every error the connector raises to users carries a stable
condition (GAZETTE_...), its SQLSTATE and the named parts of its message, as Spark's own errors do.

Where a user finds the condition:

- An error raised where the DataFrame is loaded (options) reaches Python as PySpark's
  IllegalArgumentException (or UnsupportedOperationException): `getCondition()`,
  `getMessageParameters()` and `getSqlState()` answer the connector's.
- An error raised while a query runs reaches Python wrapped: a stream's as the
  StreamingQueryException that stops it (condition STREAM_FAILED), the Gazette exception its cause
  when the driver raised it; an error raised in a task reaches the driver wrapped once more, in
  the SparkException that aborts the job ("Job aborted due to stage failure"), the Gazette
  exception its cause. The condition is then on the JVM cause chain (see `chain_conditions`),
  and the wrapping messages repeat the Gazette one, `[GAZETTE_...]` prefix included, so
  `"[GAZETTE_DATA_LOSS]" in str(e)` finds it without the JVM.

PySpark's own `getMessage()` renders a condition from Spark's error catalog, which does not hold
the connector's (nor the Kafka connector's): use `str(e)` for the message.
"""

import pytest

from conftest import condition_of, requires_local_binaries, spark_throwables

NOWHERE = "http://127.0.0.1:1"  # never contacted: options are checked where the DataFrame is loaded


def chain_conditions(error) -> list[str]:
    """The conditions along the JVM cause chain of a PySpark error, outermost first."""
    return [condition_of(t) for t in spark_throwables(error)]


def test_an_unknown_option_at_load_has_its_condition_and_names_the_option(spark):
    from pyspark.errors import IllegalArgumentException

    with pytest.raises(IllegalArgumentException) as e:
        spark.read.format("gazette").option("broker", NOWHERE).option("journals", "a").option(
            "startingOffset", "earliest"
        ).load()
    assert condition_of(e.value) == "GAZETTE_UNKNOWN_OPTION", str(e.value)
    assert "[GAZETTE_UNKNOWN_OPTION] Unknown Gazette option 'startingOffset'" in str(e.value)
    assert e.value.getMessageParameters()["option"] == "startingOffset"
    assert e.value.getSqlState().startswith("42")


def test_a_bad_value_has_its_condition_and_parameters_naming_option_and_value(spark):
    from pyspark.errors import IllegalArgumentException

    with pytest.raises(IllegalArgumentException) as e:
        spark.readStream.format("gazette").option("broker", NOWHERE).option("selector", "prefix=a/").option(
            "maxBytesPerTrigger", "-1"
        ).load()
    assert condition_of(e.value) == "GAZETTE_INVALID_OPTION", str(e.value)
    parameters = e.value.getMessageParameters()
    assert parameters["option"] == "maxBytesPerTrigger" and parameters["value"] == "-1", parameters
    assert "Gazette option 'maxBytesPerTrigger' has invalid value '-1'" in str(e.value)
    assert e.value.getSqlState() == "22023"


def test_a_secret_is_in_neither_message_nor_parameters(spark):
    from pyspark.errors import IllegalArgumentException

    with pytest.raises(IllegalArgumentException) as e:
        spark.read.format("gazette").option("broker", "https://127.0.0.1:1").option("journals", "a").option(
            "authToken", "s3cr3t with spaces"
        ).load()
    assert condition_of(e.value) == "GAZETTE_INVALID_OPTION"
    assert e.value.getMessageParameters()["option"] == "authToken"
    assert "s3cr3t" not in str(e.value) and "s3cr3t" not in repr(e.value.getMessageParameters())


def run_until_failure(query):
    """The StreamingQueryException that stops `query`, which must fail within two minutes."""
    from pyspark.errors import StreamingQueryException

    try:
        with pytest.raises(StreamingQueryException) as e:
            query.awaitTermination(120)
        return e.value
    finally:
        query.stop()


def rows(spark, value_sql: str):
    return spark.readStream.format("rate").option("rowsPerSecond", "10").load().selectExpr(f"{value_sql} AS value")


@requires_local_binaries
def test_a_stream_into_a_journal_that_does_not_exist_fails_with_the_condition_as_cause(cluster, spark, tmp_path):
    # The driver lists the sink's journal when the first batch is written, so the Gazette
    # exception is the direct cause of the StreamingQueryException.
    query = (
        rows(spark, "CAST(value AS STRING)")
        .writeStream.format("gazette")
        .option("broker", cluster.broker)
        .option("journal", "errors/no-such-journal")
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .start()
    )
    error = run_until_failure(query)
    assert "GAZETTE_UNKNOWN_JOURNAL" in chain_conditions(error), (chain_conditions(error), str(error))
    assert "[GAZETTE_UNKNOWN_JOURNAL] Journal 'errors/no-such-journal' (option 'journal') does not exist" in str(error)


@requires_local_binaries
def test_a_row_refused_in_a_task_reaches_the_driver_with_its_condition_on_the_cause_chain(cluster, spark, tmp_path):
    from specs import journal_specs

    cluster.apply(journal_specs("errors/", ["out"]))
    # The task writing the null value fails; the job it belongs to is aborted with a SparkException
    # whose cause is the Gazette exception, shipped from the executor.
    query = (
        rows(spark, "CAST(NULL AS STRING)")
        .writeStream.format("gazette")
        .option("broker", cluster.broker)
        .option("journal", "errors/out")
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .start()
    )
    error = run_until_failure(query)
    conditions = chain_conditions(error)
    assert "GAZETTE_SINK_INVALID_ROW" in conditions, (conditions, str(error))
    assert conditions.index("GAZETTE_SINK_INVALID_ROW") > 0  # a cause, not the exception raised
    assert "[GAZETTE_SINK_INVALID_ROW] Row 0 of partition" in str(error) and "has a null value" in str(error)


def test_an_unreachable_broker_has_its_condition_naming_rpc_journal_and_broker(spark):
    # The client's own error (retries exhausted) reaches users under a condition, its message kept.
    with pytest.raises(Exception) as e:
        spark.read.format("gazette").option("broker", NOWHERE).option("journals", "a/b").option(
            "retryTimeout", "1s"
        ).load().count()
    conditions = chain_conditions(e.value) or [c for c in ["GAZETTE_BROKER_UNAVAILABLE"] if c in str(e.value)]
    assert "GAZETTE_BROKER_UNAVAILABLE" in conditions, str(e.value)[:2000]
    assert "[GAZETTE_BROKER_UNAVAILABLE]" in str(e.value) and "127.0.0.1:1 is unreachable" in str(e.value)


def test_a_write_naming_no_journals_says_what_each_side_takes(spark):
    from pyspark.errors import IllegalArgumentException

    df = spark.range(1).selectExpr("CAST(id AS STRING) AS value")
    with pytest.raises(IllegalArgumentException) as e:
        df.write.format("gazette").option("broker", NOWHERE).mode("append").save()
    assert condition_of(e.value) == "GAZETTE_MISSING_OPTION"
    assert "option 'journal' or 'selector' is required: which journals to write (save(journal)" in str(e.value)


def test_a_source_takes_no_path(spark):
    from pyspark.errors import IllegalArgumentException

    for load in (
        lambda r: r.load("a/b"),
        lambda r: r.option("paths", '["a/b"]').load(),
    ):
        with pytest.raises(IllegalArgumentException) as e:
            load(spark.read.format("gazette").option("broker", NOWHERE).option("journals", "a/b"))
        assert condition_of(e.value) == "GAZETTE_UNKNOWN_OPTION", str(e.value)
        assert e.value.getMessageParameters()["option"] in ("path", "paths")
