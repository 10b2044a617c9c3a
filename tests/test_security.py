"""Brokers that require mutual TLS and bearer tokens (started with certificates and an auth key
made for the test): the connector and the admin helpers read and write with the right credentials, fail clearly
without them, and never shows the token: not in logs (at INFO), errors, plans or progress."""

import json
import subprocess
import sys
import textwrap

import pytest

from cluster import LocalCluster
from conftest import option_error, requires_local_binaries
from security import Security
from specs import journal_specs, journal_tree

pytestmark = requires_local_binaries


# Applied through spark_gazette.admin as a parsed tree: secure/admin.
ADMIN_SPEC = journal_tree("secure/", ["admin"])


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    security = Security.generate(str(tmp_path_factory.mktemp("credentials")))
    with LocalCluster(brokers=1, security=security) as cluster:
        cluster.apply(journal_specs("secure/", ["copies", "events"]))
        yield cluster, security


def test_mutual_tls_and_tokens_read_and_write_and_the_token_never_shows(secured, tmp_path):
    cluster, security = secured
    token = security.token()
    forged = Security.generate(str(tmp_path / "other"), tls=False).token()
    creds = {
        "trusted_ca_file": security.ca_file,
        "cert_file": security.client_cert,
        "cert_key_file": security.client_key,
    }
    # Everything the driver logs, down to INFO, is searched for the token.
    log4j = tmp_path / "log4j2.properties"
    log4j.write_text(
        "rootLogger.level = info\nrootLogger.appenderRef.stderr.ref = stderr\n"
        "appender.console.type = Console\nappender.console.name = stderr\n"
        "appender.console.target = SYSTEM_ERR\nappender.console.layout.type = PatternLayout\n"
        "appender.console.layout.pattern = %p %c: %m%n%ex\n"
        # Without a level of its own, PySpark's shell mode would hold the console at WARN.
        "logger.spark.name = org.apache.spark\nlogger.spark.level = info\n"
    )
    job = tmp_path / "job.py"
    job.write_text(
        textwrap.dedent(f"""
        import json, io, contextlib
        from pyspark.sql import SparkSession
        from spark_gazette import configure_spark_with_gazette, read, read_stream, write, write_stream
        spark = configure_spark_with_gazette(SparkSession.builder.master("local[2]")
                                             .config("spark.ui.enabled", "false")
                                             .config("spark.driver.extraJavaOptions",
                                                     "-Dlog4j2.configurationFile=file:{log4j}")).getOrCreate()
        b, creds, token = {cluster.broker!r}, {creds!r}, {token!r}
        write(spark.createDataFrame([(json.dumps({{"n": i}}),) for i in range(20)], ["value"]),
              broker=b, journal="secure/events", auth_token=token, **creds)
        q = (write_stream(read_stream(spark, broker=b, journals="secure/events", starting_offsets="earliest",
                                      auth_token=token, **creds).selectExpr("begin"),
                          broker=b, journal="secure/copies", checkpoint_location={str(tmp_path / "ckpt")!r},
                          auth_token=token, **creds)
             .trigger(availableNow=True).start())
        assert q.awaitTermination(600), "the query did not end within 10 minutes"
        copies = read(spark, broker=b, journals="secure/copies", auth_token=token, **creds)
        plan = io.StringIO()
        with contextlib.redirect_stdout(plan):
            copies.explain(True)
        events = read(spark, broker=b, journals="secure/events", auth_token=token, **creds)
        values = sorted(json.loads(r.value)["n"] for r in events.collect())
        begins = sorted(r.begin for r in events.collect())
        copied = sorted(json.loads(r.value)["begin"] for r in copies.collect())
        from spark_gazette import admin
        admin.apply_specs(spark, b, {ADMIN_SPEC!r}, auth_token=token, **creds)
        head = admin.publish(spark, b, "secure/admin", [{{"n": 1}}, {{"n": 2}}], auth_token=token, **creds)
        listed = {{j["name"]: j["writeHead"] for j in admin.list_journals(spark, b, "prefix=secure/", auth_token=token,
                                                                         **creds)}}
        errors = {{}}
        attempts = {{
            "no_ca": dict(auth_token=token),
            "no_client_cert": dict(trusted_ca_file=creds["trusted_ca_file"], auth_token=token),
            "no_token": dict(creds),
            "forged_token": dict(creds, auth_token={forged!r}),
        }}
        for name, kw in attempts.items():
            try:
                read(spark, broker=b, journals="secure/events", retry_timeout="1s", **kw).count()
                errors[name] = None
            except Exception as e:
                errors[name] = str(e)
        print("RESULT " + json.dumps({{"values": values, "copied": copied == begins, "admin": [head, listed],
                                       "plan": plan.getvalue(), "errors": errors,
                                       "progress": json.dumps([json.loads(p.json) for p in q.recentProgress])}}))
        spark.stop()
    """)
    )
    out = subprocess.run([sys.executable, str(job)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert token not in out.stdout and token not in out.stderr and forged not in out.stdout + out.stderr
    assert "INFO org.apache.spark" in out.stderr  # the logs were there to be searched
    result = json.loads(next(line for line in out.stdout.splitlines() if line.startswith("RESULT "))[7:])
    assert result["values"] == list(range(20)) and result["copied"]
    head, listed = result["admin"]
    assert set(listed) == {"secure/admin", "secure/copies", "secure/events"} and listed["secure/admin"] == head > 0
    assert "authToken=*********(redacted)" in result["plan"]
    assert "secure/events" in result["progress"]
    errors = result["errors"]
    assert all(errors.values()), errors
    assert cluster.broker in errors["no_ca"] and cluster.broker in errors["no_client_cert"]
    assert "UNAUTHENTICATED" in errors["no_token"] and "UNAUTHENTICATED" in errors["forged_token"]


def test_a_bad_token_is_refused_where_the_dataframe_is_loaded_without_being_shown(spark):
    from spark_gazette import read_stream

    e = option_error(
        lambda: read_stream(spark, broker="https://127.0.0.1:1", journals="a", auth_token="s3cr3t with spaces"),
        "GAZETTE_INVALID_OPTION",
        "authToken",
    )
    assert "s3cr3t" not in str(e) and "s3cr3t" not in repr(e)
