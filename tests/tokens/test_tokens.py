"""Queries that outlive their bearer tokens, against brokers that check them: short runs of
tokens.py (`make test-tokens` runs the five-minute ones), judged by Gazette's ReadCommittedIter; and
a token that expires with nothing to renew it, which fails the query, naming its `exp`, in bounded
time."""

import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import assembly_jar, condition_of, requires_local_binaries, spark_throwables

sys.path.insert(0, str(Path(__file__).parent))
import tokens  # noqa: E402
from cluster import LocalCluster  # noqa: E402
from security import Security  # noqa: E402
from specs import journal_specs  # noqa: E402

pytestmark = requires_local_binaries


def test_a_stream_and_batch_outlive_tokens_renewed_in_a_file():
    """The key rotation (nine broker restarts, then minutes until Gazette persists what they left on
    peers) is `make test-tokens`'s: with it this run took nine minutes."""
    assembly_jar()
    summary = tokens.run(minutes=0.5, ttl=12, rows=10_000, rotate_key=False)
    print(summary)
    assert summary.ok, str(summary)
    assert summary.tokens >= 4, str(summary)


def test_a_stream_and_batch_outlive_tokens_from_a_provider_class():
    assembly_jar()
    summary = tokens.run(minutes=0.5, ttl=12, provider=True, rows=10_000, rotate_key=False)
    print(summary)
    assert summary.ok, str(summary)
    # Four fifths of 12 s: the driver and the executor each ask again several times.
    assert summary.tokens >= 4, str(summary)


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    security = Security.generate(str(tmp_path_factory.mktemp("credentials")), tls=False)
    with LocalCluster(brokers=1, security=security) as cluster:
        cluster.apply(journal_specs("expiring/", ["events"]))
        yield cluster, security


@pytest.mark.parametrize("source", ["authToken", "authTokenFile"])
def test_an_expired_token_with_nothing_to_renew_it_fails_the_query_naming_its_exp(secured, spark, tmp_path, source):
    """A fixed token fails at its first refusal; a file that is never rewritten, once `retryTimeout`
    has passed without a renewal. Either names the token's exp and the journal, never the token."""
    from spark_gazette import admin, read_stream

    cluster, security = secured
    token = security.token(ttl=6)
    exp = datetime.fromtimestamp(json.loads(_payload(token))["exp"], tz=UTC)
    admin.publish(spark, cluster.broker, "expiring/events", [{"n": 1}], auth_token=security.token())
    if source == "authTokenFile":
        path = tmp_path / "token"
        path.write_text(token)
        credentials = {"auth_token_file": str(path)}
    else:
        credentials = {"auth_token": token}
    stream = read_stream(
        spark,
        cluster.broker,
        journals="expiring/events",
        starting_offsets="earliest",
        retry_timeout="5s",
        **credentials,
    )
    started = time.monotonic()
    query = stream.writeStream.format("noop").trigger(processingTime="500 milliseconds").start()
    try:
        with pytest.raises(Exception) as failed:
            query.awaitTermination(120)
            raise AssertionError("the query outlived its token")
    finally:
        query.stop()
    took = time.monotonic() - started
    message = str(failed.value)
    assert "[GAZETTE_AUTH_TOKEN]" in message, message
    assert f"expired at {exp.strftime('%Y-%m-%dT%H:%M:%S')}" in message and "expiring/events" in message, message
    assert token not in message and token.split(".")[2] not in message
    conditions = [condition_of(t) for t in spark_throwables(failed.value)]
    assert "GAZETTE_AUTH_TOKEN" in conditions, conditions
    # 6 s to live, the brokers' 5 s of leeway, then 5 s of retryTimeout for the file.
    assert took < 60, f"the query failed {took:.0f} s after it started"
    if source == "authTokenFile":
        assert str(tmp_path / "token") in message


def _payload(jwt: str) -> str:
    import base64

    body = jwt.split(".")[1]
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()


def test_a_provider_that_cannot_be_loaded_is_refused_naming_the_option(spark):
    from conftest import option_error
    from spark_gazette import read_stream

    option_error(
        lambda: read_stream(spark, "http://127.0.0.1:1", journals="a", auth_token_provider="no.such.Provider"),
        "GAZETTE_INVALID_OPTION",
        "authTokenProvider",
        "no.such.Provider",
    )
    option_error(
        lambda: read_stream(spark, "http://127.0.0.1:1", journals="a", auth_token="a.b.c", auth_token_file="/x"),
        "GAZETTE_CONFLICTING_OPTIONS",
        "authToken",
    )
