"""The lag tool (`python -m spark_gazette lag`, `spark_gazette.admin.lag`) on the checkpoints of
real queries against a real broker: stopped, running with a batch in progress, a union of two
Gazette sources, and checkpoints that are not a Gazette source's."""

import json
import re
import socket
import subprocess
import sys
import threading
import time

import pytest

from cluster import LocalCluster
from conftest import requires_local_binaries
from specs import journal_specs

pytestmark = requires_local_binaries

JOURNALS = ["lag/part-0", "lag/part-1"]


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(brokers=1) as c:
        c.apply(journal_specs("lag/", ["part-0", "part-1"], labels={"app": "lag"}))
        c.apply(journal_specs("lagrun/", ["part-0"], labels={"app": "lagrun"}))
        c.apply(journal_specs("lagout/", ["part-0"]))
        yield c


def publish(spark, broker: str, journal: str, n: int, start: int = 0) -> int:
    """`n` committed messages of about 100 bytes; the write head after them."""
    from spark_gazette.admin import publish as publish_messages

    return publish_messages(spark, broker, journal, [{"n": start + i, "pad": "x" * 64} for i in range(n)])


def lag_command(*args: str, capsys) -> tuple[int, str, str]:
    """`python -m spark_gazette lag` run in this process, on its session: exit status, stdout, stderr."""
    from spark_gazette.__main__ import main

    capsys.readouterr()
    status = main(["lag", *args])
    out = capsys.readouterr()
    return status, out.out, out.err


def number(cell: str) -> int | None:
    return None if cell == "-" else int(cell.replace(",", ""))


@pytest.fixture(scope="module")
def stopped(cluster, spark, tmp_path_factory):
    """A query reading each journal through a Gazette source of its own (a union), run to the heads
    and stopped; then the first journal written further. Its checkpoint, the heads it read to and
    the heads after, and when (epoch ms) the messages past the first heads were published, at
    least and at most."""
    from spark_gazette import read_stream

    heads = {j: publish(spark, cluster.broker, j, 20 + 10 * i) for i, j in enumerate(JOURNALS)}
    checkpoint = str(tmp_path_factory.mktemp("lag") / "ckpt")
    a, b = (read_stream(spark, broker=cluster.broker, journals=j, starting_offsets="earliest") for j in JOURNALS)
    query = (
        a.union(b)
        .writeStream.format("memory")
        .queryName("lag_stopped")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(300), "the query did not end"
    published = [time.time() * 1000]
    after = {**heads, JOURNALS[0]: publish(spark, cluster.broker, JOURNALS[0], 7, start=100)}
    published.append(time.time() * 1000)
    assert after[JOURNALS[0]] > heads[JOURNALS[0]]
    return checkpoint, heads, after, published


def test_a_stopped_querys_lag_is_each_journals_head_less_its_committed_offset_exactly(cluster, spark, stopped):
    from spark_gazette.admin import lag

    checkpoint, heads, after, (first, last) = stopped
    report = lag(spark, checkpoint, cluster.broker)
    assert report["plannedBatch"] is None and report["committedBatch"] is not None
    assert [s["source"] for s in report["sources"]] == ["0", "1"], "each Gazette source of the union"
    by_journal = {j["journal"]: j for s in report["sources"] for j in s["journals"]}
    assert sorted(by_journal) == JOURNALS
    for journal, j in by_journal.items():
        assert j["committed"] == heads[journal], "the stopped query read to the heads it saw"
        assert j["writeHead"] == after[journal]
        assert j["bytesBehind"] == after[journal] - heads[journal]
        assert j["planned"] is None and j["note"] is None
    assert by_journal[JOURNALS[0]]["bytesBehind"] > 0 and by_journal[JOURNALS[1]]["bytesBehind"] == 0
    # Time behind: the age of the first message not read, by its UUID's clock; 0 at the head.
    behind = by_journal[JOURNALS[0]]["timeBehindMs"]
    assert report["measuredAt"] - last - 1000 <= behind <= report["measuredAt"] - first + 1000, (behind, first, last)
    assert by_journal[JOURNALS[1]]["timeBehindMs"] == 0
    assert report["timeBehindMs"] == behind and [s["timeBehindMs"] for s in report["sources"]] == [behind, 0]
    assert report["bytesBehind"] == sum(after.values()) - sum(heads.values())
    assert [s["bytesBehind"] for s in report["sources"]] == [after[j] - heads[j] for j in JOURNALS]


def test_the_command_prints_an_aligned_table_the_same_numbers_as_json_and_errors_on_one_line(
    cluster, stopped, tmp_path, capsys
):
    checkpoint, heads, after, _ = stopped
    # As users run it: a JVM of its own, quiet.
    table = subprocess.run(
        [sys.executable, "-m", "spark_gazette", "lag", "--checkpoint", checkpoint, "--broker", cluster.broker]
        + ["--rpc-timeout", "20s"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert table.returncode == 0, table.stderr
    assert table.stderr == "", "a command's normal run writes nothing but its output"
    lines = table.stdout.splitlines()
    assert re.fullmatch(r"file:/\S+/ckpt: batch \d+ committed", lines[0]), lines[0]
    assert lines[1].split() == ["SOURCE", "JOURNAL", "COMMITTED", "WRITE", "HEAD", "BYTES", "BEHIND", "TIME", "BEHIND"]
    # Aligned: every line of the table is as wide as its header, numbers right-aligned below it.
    assert len({len(line) for line in lines[1:]}) == 1, table.stdout
    rows = {cells[1]: cells for cells in (line.split() for line in lines[2:-1])}
    total = lines[-1].split()
    assert total[0] == "total" and number(total[-2]) == sum(after.values()) - sum(heads.values())
    status, out, err = lag_command("--checkpoint", checkpoint, "--broker", cluster.broker, "--json", capsys=capsys)
    assert status == 0 and err == ""
    report = json.loads(out)
    assert sorted(rows) == sorted(j["journal"] for s in report["sources"] for j in s["journals"])
    for source in report["sources"]:
        for j in source["journals"]:
            assert rows[j["journal"]][0] == source["source"]
            assert [number(c) for c in rows[j["journal"]][2:5]] == [j["committed"], j["writeHead"], j["bytesBehind"]]
            # The table's time is a later measure than the JSON's: the same message's age, a little older.
            assert re.fullmatch(r"0s|\d+ms|\d+\.\ds|\d+m\d\ds", rows[j["journal"]][5]), rows[j["journal"]]
            assert (rows[j["journal"]][5] == "0s") == (j["timeBehindMs"] == 0)
    assert report["bytesBehind"] == number(total[-2])
    # The connector's error, on one line, with no trace.
    (tmp_path / "notes.txt").write_text("x")
    status, out, err = lag_command("--checkpoint", str(tmp_path), "--broker", cluster.broker, capsys=capsys)
    assert status == 1 and out == ""
    assert err.startswith("lag: [GAZETTE_NOT_A_SOURCE_CHECKPOINT] ") and "(it holds notes.txt)" in err
    assert len(err.splitlines()) == 1, err


def test_a_broker_that_does_not_answer_is_told_soon_naming_the_flag_that_waits_longer(stopped, capsys):
    checkpoint = stopped[0]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    began = time.monotonic()
    broker = f"http://127.0.0.1:{closed}"
    status, out, err = lag_command(
        "--checkpoint", checkpoint, "--broker", broker, "--retry-timeout", "1s", capsys=capsys
    )
    assert status == 1 and out == ""
    assert err.startswith("lag: [GAZETTE_BROKER_UNAVAILABLE] ") and f"127.0.0.1:{closed}" in err, err
    assert "--retry-timeout" in err and len(err.splitlines()) == 1, err
    assert time.monotonic() - began < 30


def test_a_running_querys_batch_in_progress_shows_the_offsets_it_will_end_at(cluster, spark, tmp_path):
    """The batch is held inside foreachBatch, its offsets planned and not committed."""
    from spark_gazette import read_stream
    from spark_gazette.admin import lag

    journal = "lagrun/part-0"
    first = publish(spark, cluster.broker, journal, 30)
    armed, entered, release = threading.Event(), threading.Event(), threading.Event()
    held = []

    def hold(df, batch_id):
        df.count()
        if armed.is_set() and not held:
            held.append(batch_id)
            entered.set()
            release.wait(120)

    stream = read_stream(spark, broker=cluster.broker, journals=journal, starting_offsets="earliest")
    checkpoint = str(tmp_path / "ckpt")
    query = stream.writeStream.foreachBatch(hold).option("checkpointLocation", checkpoint).start()
    try:
        query.processAllAvailable()
        armed.set()
        second = publish(spark, cluster.broker, journal, 5, start=100)
        assert entered.wait(120), "no batch started after the second append"
        third = publish(spark, cluster.broker, journal, 3, start=200)
        report = lag(spark, checkpoint, cluster.broker)
    finally:
        release.set()
        query.stop()
    assert (report["committedBatch"], report["plannedBatch"]) == (held[0] - 1, held[0])
    (j,) = report["sources"][0]["journals"]
    assert (j["committed"], j["planned"], j["writeHead"]) == (first, second, third)
    assert j["bytesBehind"] == third - first and j["timeBehindMs"] > 0


def test_checkpoints_of_no_gazette_source_are_refused_saying_what_is_there(cluster, spark, tmp_path):
    """A rate source written to Gazette (a sink-only query), a directory of other files, none at all."""
    from pyspark.errors import PySparkException

    from spark_gazette import write_stream
    from spark_gazette.admin import lag

    checkpoint = str(tmp_path / "rate")
    rate = spark.readStream.format("rate").option("rowsPerSecond", "5").load()
    query = write_stream(
        rate.selectExpr("to_json(named_struct('n', value)) AS value"),
        broker=cluster.broker,
        journal="lagout/part-0",
        checkpoint_location=checkpoint,
    ).start()
    try:
        deadline = time.monotonic() + 120
        while query.lastProgress is None:
            assert time.monotonic() < deadline and query.exception() is None, "the rate query committed no batch"
            time.sleep(0.2)
    finally:
        query.stop()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("x")

    def refusal(path: str) -> str:
        with pytest.raises(PySparkException) as e:
            lag(spark, path, cluster.broker)
        assert "GAZETTE_NOT_A_SOURCE_CHECKPOINT" in str(e.value)
        return str(e.value)

    said = refusal(checkpoint)
    assert re.search(
        r"reads no Gazette journals: offsets/\d+ holds source 0: \d+, none of them journal offsets; "
        r"it writes to Gazette \(gazette-sink/\), which is not read",
        said,
    ), said
    assert "it has no offsets/ directory (it holds notes.txt)" in refusal(str(tmp_path / "other"))
    assert re.search(r"Checkpoint location file:/\S+/absent does not exist", refusal(str(tmp_path / "absent")))


def test_the_table_shows_a_batch_in_progress_notes_and_durations_as_a_person_reads_them():
    import doctest

    from spark_gazette.commands import lag as command

    assert doctest.testmod(command).failed == 0
    a = {"journal": "a", "committed": 10, "planned": 20, "writeHead": 1_000_010, "bytesBehind": 1_000_000}
    gone = {"journal": "gone", "committed": 5, "planned": None, "writeHead": None, "bytesBehind": None}
    journals = [
        {**a, "timeBehindMs": 65_000, "note": None},
        {**gone, "timeBehindMs": None, "note": "journal not found"},
    ]
    report = {"checkpoint": "file:/c", "committedBatch": None, "plannedBatch": 0}
    report |= {"bytesBehind": 1_000_000, "timeBehindMs": 65_000, "sources": [{"source": "0", "journals": journals}]}
    assert command.table(report).splitlines() == [
        "file:/c: no batch committed, batch 0 planned",
        "JOURNAL  COMMITTED  PLANNED  WRITE HEAD  BYTES BEHIND  TIME BEHIND  NOTE",
        "a               10       20   1,000,010     1,000,000        1m05s",
        "gone             5        -           -             -            -  journal not found",
        "total                                       1,000,000        1m05s",
    ]


def test_a_setting_the_jvm_refuses_is_named_without_a_traceback(tmp_path):
    """Run as users run it, in a process of its own: the user reads what was wrong, not a Python traceback."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "spark_gazette",
            "lag",
            "--checkpoint",
            str(tmp_path / "ckpt"),
            "--broker",
            "http://127.0.0.1:1",
            "--conf",
            "spark.driver.memory=lots",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode != 0
    assert "Traceback" not in run.stderr, f"a traceback was printed:\n{run.stderr}"
    assert "lots" in run.stderr or "heap" in run.stderr.lower(), f"the JVM's reason is lost:\n{run.stderr}"
