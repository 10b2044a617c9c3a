"""The anchor of bench-latency's real-time runs still runs: Spark's Kafka connector in real-time
mode, Kafka -> Spark -> Kafka, on its own broker, timing a few seconds of messages. Run by `make
bench-tiny`, after `make setup-bench-kafka` (the broker's and Spark's Kafka jars, pyspark 4.2.x
in .venv-bench-kafka), which `make test` does not install; hence not a test_ file. Nothing about
the numbers is asserted."""

import re
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
KAFKA_PYTHON = HERE.parents[1] / ".venv-bench-kafka" / "bin" / "python"


def test_the_kafka_pipeline_starts_and_times_every_message():
    assert KAFKA_PYTHON.exists(), f"{KAFKA_PYTHON} is missing: run `make setup-bench-kafka`"
    args = ["--only-kafka", "--journals", "2", "--rate", "20", "--seconds", "5", "--warm-up", "1", "--warm-up-run", "0"]
    run = subprocess.run(
        [str(KAFKA_PYTHON), str(HERE / "bench_latency.py"), *args, "--batch", "5 seconds"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    counts = re.search(
        r"Kafka -> Spark -> Kafka: (\d+) produced, (\d+) acknowledged, (\d+) output records read", run.stdout
    )
    assert counts, run.stdout
    produced, acknowledged, read = map(int, counts.groups())
    assert produced >= 50 and acknowledged == produced and read == acknowledged, run.stdout
    for what in ("end-to-end p50", "end-to-end p99", "end-to-end max"):
        assert re.search(rf"^result real-time 2 partitions 5 seconds batches Kafka {what}: \d+ ms", run.stdout, re.M), (
            run.stdout
        )
    assert re.search(r"Kafka's own produce -> consume .*: p50 \d+ ms, p99 \d+ ms", run.stdout), run.stdout
    table = run.stdout[run.stdout.index("journals  mode") :]
    assert re.search(r"^ +2 +real-time 5 seconds: Kafka end to end +\d+ +\d+ +\d+ +\d+$", table, re.M), table
