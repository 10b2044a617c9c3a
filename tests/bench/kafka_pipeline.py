"""Spark's Kafka connector in real-time mode, the anchor `bench_latency.py --real-time` measures the
connector against: a Kafka broker of its own (KRaft, one node that is broker and controller, on
loopback), the same traffic as the Gazette runs (RATE messages a second over as many partitions as
there are journals, each carrying the time it was produced), and Kafka -> Spark -> Kafka, timed
from that time to the moment a consumer of the output topic reads the row; beside it Kafka's own
produce -> consume on the input topic, as `judge tail` times Gazette's append -> read.

What it runs on is what `build/setup.sh --bench-kafka` installs: the broker's and Spark's Kafka
jars (classpaths resolved by build/bench-kafka into target/bench-kafka/) and
python/requirements-bench-kafka.txt's pyspark and confluent-kafka in .venv-bench-kafka.
"""

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "harness"))

from messages import gazette_uuid  # noqa: E402

CLASSPATHS = ROOT / "target" / "bench-kafka"
SETUP_HINT = "run `make setup-bench-kafka` (`make bench-latency` with --real-time does)"


def classpath(name: str) -> str:
    """A classpath build/setup.sh --bench-kafka wrote: `broker` or `spark-kafka`."""
    path = CLASSPATHS / f"{name}.classpath"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: {SETUP_HINT}")
    jars = path.read_text().strip().split(":")
    missing = [j for j in jars if not os.path.exists(j)]
    if missing:
        raise FileNotFoundError(f"{missing[0]} (of {path}) is missing: {SETUP_HINT}")
    return ":".join(jars)


def spark_kafka_jars() -> str:
    """Spark's Kafka source and sink, for `spark.jars`."""
    return classpath("spark-kafka").replace(":", ",")


# librdkafka logs every refused connection to stderr (while the broker starts, once it stops); what
# matters reaches the code as errors: a failed delivery, a consumer's error. And it leaves Nagle's
# algorithm on, which Kafka's Java clients (Spark's) and Gazette's gRPC turn off.
QUIET = {"log_level": 0, "socket.nagle.disable": True}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class KafkaBroker:
    """One Kafka node in KRaft mode (broker and controller) on loopback ports, its log in a
    temporary directory, stopped and removed on leaving the block.

        with KafkaBroker() as kafka:
            kafka.create_topic("in", partitions=10)
    """

    def __init__(self, start_timeout: float = 90) -> None:
        try:
            import confluent_kafka  # noqa: F401
        except ImportError:
            raise SystemExit(
                f"Spark's Kafka connector runs from {ROOT / '.venv-bench-kafka'} (Kafka's Python client, pyspark "
                f"4.2.x): {SETUP_HINT} and run this with its python, or pass --no-kafka"
            ) from None
        self.port, self.controller_port = _free_port(), _free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.start_timeout = start_timeout
        self._dir = Path(tempfile.mkdtemp(prefix="bench-kafka-"))
        self._proc: subprocess.Popen | None = None

    def _java(self, main: str, *args: str) -> list[str]:
        return [
            shutil.which("java") or "java",
            "-Xms256m",
            "-Xmx512m",
            f"-Dlog4j2.configurationFile={self._dir / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={self._dir}",
            "-cp",
            classpath("broker"),
            main,
            *args,
        ]

    def __enter__(self) -> "KafkaBroker":
        props = self._dir / "server.properties"
        props.write_text(
            "\n".join(
                [
                    "process.roles=broker,controller",
                    "node.id=1",
                    f"controller.quorum.voters=1@127.0.0.1:{self.controller_port}",
                    f"listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
                    f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}",
                    "controller.listener.names=CONTROLLER",
                    "inter.broker.listener.name=PLAINTEXT",
                    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                    f"log.dirs={self._dir / 'data'}",
                    "offsets.topic.replication.factor=1",
                    "transaction.state.log.replication.factor=1",
                    "transaction.state.log.min.isr=1",
                    "share.coordinator.state.topic.replication.factor=1",
                    "share.coordinator.state.topic.min.isr=1",
                    "group.initial.rebalance.delay.ms=0",
                    "auto.create.topics.enable=false",
                ]
            )
            + "\n"
        )
        (self._dir / "log4j2.properties").write_text(
            "\n".join(
                [
                    "appender.file.type=File",
                    "appender.file.name=file",
                    f"appender.file.fileName={self._dir / 'broker.log'}",
                    "appender.file.layout.type=PatternLayout",
                    "appender.file.layout.pattern=[%d] %p %m (%c)%n",
                    "rootLogger.level=WARN",
                    "rootLogger.appenderRef.file.ref=file",
                ]
            )
            + "\n"
        )
        # A cluster id is a base64 (URL, unpadded) UUID, as `kafka-storage.sh random-uuid` prints.
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        fmt = subprocess.run(
            self._java("kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(props)),
            capture_output=True,
            text=True,
        )
        if fmt.returncode != 0:
            raise RuntimeError(f"kafka-storage format failed: {(fmt.stderr or fmt.stdout).strip()[-2000:]}")
        self._out = open(self._dir / "broker.out", "w")  # noqa: SIM115 - closed in __exit__
        self._proc = subprocess.Popen(
            self._java("kafka.Kafka", str(props)), stdout=self._out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            self._wait_ready()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_ready(self) -> None:
        from confluent_kafka.admin import AdminClient

        deadline = time.monotonic() + self.start_timeout
        admin = AdminClient({"bootstrap.servers": self.bootstrap, **QUIET})
        while True:
            if self._proc.poll() is not None:
                raise RuntimeError(f"the Kafka broker exited {self._proc.returncode}: {self.log_tail()}")
            try:
                if admin.list_topics(timeout=2).brokers:
                    return
            except Exception:  # noqa: BLE001 - not up yet
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"the Kafka broker did not start in {self.start_timeout:.0f} s: {self.log_tail()}")
            time.sleep(0.5)

    def log_tail(self) -> str:
        text = ""
        for name in ("broker.out", "broker.log"):
            path = self._dir / name
            if path.exists():
                text += path.read_text()[-1500:]
        return text.strip()

    def create_topic(self, name: str, partitions: int) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap, **QUIET})
        future = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])[name]
        future.result(timeout=60)
        deadline = time.monotonic() + 60  # until every partition has its leader
        while time.monotonic() < deadline:
            topic = admin.list_topics(topic=name, timeout=5).topics.get(name)
            if topic and len(topic.partitions) == partitions and all(p.leader >= 0 for p in topic.partitions.values()):
                return
            time.sleep(0.2)
        raise TimeoutError(f"topic {name}: {partitions} partitions without leaders after 60 s")

    def __exit__(self, *_exc) -> None:
        if self._proc is not None and self._proc.poll() is None:
            os.killpg(self._proc.pid, signal.SIGTERM)
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait()
        if getattr(self, "_out", None) is not None:
            self._out.close()
        shutil.rmtree(self._dir, ignore_errors=True)


class KafkaTraffic:
    """RATE messages a second to `partitions` partitions of `topic` in turn, each the same bytes
    as the Gazette runs' (`{"_meta":{"uuid":...},"t": the time it was produced}`), produced one
    by one (linger.ms=0, acks=all: acknowledged once the broker has it, as an append is), until
    stopped."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: float, producer: int) -> None:
        from confluent_kafka import Producer

        self.topic, self.partitions, self.rate, self.producer_id = topic, partitions, rate, producer
        self.sent, self.delivered, self.failed = 0, 0, []
        self._producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": "all", **QUIET})
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _delivered(self, err, _msg) -> None:
        if err is not None:
            self.failed.append(str(err))
        else:
            self.delivered += 1

    def _run(self) -> None:
        begin = time.monotonic()
        while not self._stop.is_set():
            # A poll returns early when it serves a delivery: wait until the message is due.
            while (wait := begin + self.sent / self.rate - time.monotonic()) > 0:
                self._producer.poll(wait)
            i = self.sent
            uuid_ = gazette_uuid(self.producer_id + i % self.partitions, 0x1EF0000000000000 + (i + 1) * 16, 0)
            line = f'{{"_meta":{{"uuid":"{uuid_}"}},"t":{time.time():.6f}}}\n'.encode()
            self._producer.produce(self.topic, line, partition=i % self.partitions, on_delivery=self._delivered)
            self._producer.poll(0)
            self.sent += 1
        self._producer.flush(60)

    def run_for(self, seconds: float) -> None:
        self._thread.start()
        time.sleep(seconds)
        self._stop.set()
        self._thread.join()
        if self.failed:
            print(f"  {len(self.failed)} produces failed, e.g. {self.failed[0]}")


class KafkaTail:
    """A consumer of every partition of `topic` from its start, in a process of its own (as `judge
    tail` reads journals), collecting each record's value and the moment it was read (`seen`, Unix
    seconds)."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.args = [sys.executable, __file__, "tail", bootstrap, topic, str(partitions)]
        self.rows: list[tuple[bytes, float]] = []
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._thread = threading.Thread(target=self._collect, daemon=True)

    def _collect(self) -> None:
        for line in self._proc.stdout:
            row = json.loads(line)
            with self._lock:
                self.rows.append((row["value"].encode(), row["seen"]))

    def snapshot(self) -> list[tuple[bytes, float]]:
        with self._lock:
            return list(self.rows)

    def __enter__(self) -> "KafkaTail":
        self._proc = subprocess.Popen(self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = self._proc.stdout.readline()
        if ready.strip() != "ready":
            self._proc.kill()
            raise RuntimeError(f"the Kafka tail of {self.args[3]} did not start: {ready.strip()}")
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._proc.stdin.close()  # the tail's signal to stop
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        self._thread.join(timeout=30)


def _tail(bootstrap: str, topic: str, partitions: int) -> None:
    """KafkaTail's process: one JSON line {value, seen} per record read, until stdin closes."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"bench-tail-{topic}", "enable.auto.commit": False, **QUIET}
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    print("ready", flush=True)
    # One record a poll: a batch consume waits for its count or its timeout, not for the first record.
    while not stop.is_set():
        msg = consumer.poll(0.1)
        seen = time.time()
        if msg is None:
            continue
        if msg.error():
            print(f"the Kafka tail of {topic}: {msg.error()}", file=sys.stderr)
            continue
        print(json.dumps({"value": msg.value().decode(), "seen": seen}), flush=True)
    consumer.close()


def stop_quietly(spark, query) -> None:
    """Stops a real-time query. Its running batch's tasks are interrupted, and Spark logs each
    write it aborts as an error with a stack trace (its Kafka sink's and ours alike): nothing is
    wrong, so nothing is logged while it stops."""
    spark.sparkContext.setLogLevel("OFF")
    try:
        query.stop()
    finally:
        spark.sparkContext.setLogLevel("ERROR")


def produced_at(value: bytes) -> float:
    """The producer's time a row carries: the input's `t`, or the output's (written as a string)."""
    return float(json.loads(value)["t"])


def run_pipeline(spark, kafka: KafkaBroker, partitions: int, rate: float, seconds: float, batch: str, tmp: Path, name):
    """Kafka -> Spark -> Kafka in real-time mode: each input record's `t` to the output topic's
    partition of the same number, as the Gazette run writes each row to its input's journal.
    Returns (end-to-end, produce -> consume) latencies of the records produced from `started`,
    the query's progress, and counts: {sent, delivered, read, consumed}."""
    from pyspark.sql.functions import col, get_json_object, struct, to_json

    topic_in, topic_out = f"{name}-in", f"{name}-out"
    kafka.create_topic(topic_in, partitions)
    kafka.create_topic(topic_out, partitions)
    events = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka.bootstrap)
        .option("subscribe", topic_in)
        .option("startingOffsets", "earliest")
        .load()
    )
    rows = events.select(
        col("partition"),
        to_json(struct(get_json_object(col("value").cast("string"), "$.t").alias("t"))).alias("value"),
    )
    with (
        KafkaTail(kafka.bootstrap, topic_out, partitions) as out,
        KafkaTail(kafka.bootstrap, topic_in, partitions) as read,
    ):
        query = (
            rows.writeStream.format("kafka")
            .option("kafka.bootstrap.servers", kafka.bootstrap)
            .option("topic", topic_out)
            .option("checkpointLocation", str(tmp / f"ckpt-{name}"))
            .outputMode("update")
            .trigger(realTime=batch)
            .start()
        )
        traffic = KafkaTraffic(kafka.bootstrap, topic_in, partitions, rate, 0x060000000000)
        try:
            time.sleep(3)
            if query.exception() is not None:
                raise query.exception()
            started = time.time()
            traffic.run_for(seconds)
            deadline = time.monotonic() + 300
            while len(out.snapshot()) < traffic.delivered and time.monotonic() < deadline:
                if query.exception() is not None:
                    raise query.exception()
                time.sleep(0.1)
            progress = query.recentProgress
        finally:
            stop_quietly(spark, query)
        got, inputs = out.snapshot(), read.snapshot()
    e2e = [(produced_at(v), seen) for v, seen in got]
    direct = [(produced_at(v), seen) for v, seen in inputs]
    counts = {"sent": traffic.sent, "delivered": traffic.delivered, "read": len(got), "consumed": len(inputs)}
    return started, e2e, direct, progress, counts


def kafka_end_to_end(spark, kafka: KafkaBroker, partitions: int, args, batch: str, tmp: Path, percentile, report):
    """Runs `run_pipeline` with the Gazette runs' traffic and prints it as they print theirs:
    returns (end-to-end, produce -> consume) latencies after the warm-up, in seconds."""
    name = f"bench-{partitions}-{int(time.time() * 1000) % 10**9}"
    started, e2e, direct, progress, counts = run_pipeline(
        spark, kafka, partitions, args.rate, args.seconds, batch, tmp, name
    )
    lat = [seen - t for t, seen in e2e if t >= started + args.warm_up]
    direct_lat = [seen - t for t, seen in direct if t >= started + args.warm_up]
    print(
        f"  Kafka -> Spark -> Kafka: {counts['sent']} produced, {counts['delivered']} acknowledged, "
        f"{counts['read']} output records read, {len(progress)} batches ended"
    )
    report(progress, [(t, seen - t) for t, seen in e2e if t >= started + args.warm_up])
    label = f"real-time {partitions} partitions {batch} batches Kafka"
    print(f"result {label} end-to-end p50: {percentile(lat, 50) * 1000:.0f} ms")
    print(f"result {label} end-to-end p99: {percentile(lat, 99) * 1000:.0f} ms (Spark's Kafka source and sink)")
    print(f"result {label} end-to-end max: {percentile(lat, 100) * 1000:.0f} ms")
    print(
        "  Kafka's own produce -> consume (the input topic, same run): "
        f"p50 {percentile(direct_lat, 50) * 1000:.0f} ms, "
        f"p99 {percentile(direct_lat, 99) * 1000:.0f} ms, max {percentile(direct_lat, 100) * 1000:.0f} ms"
    )
    if counts["read"] != counts["delivered"] or counts["consumed"] != counts["delivered"]:
        raise SystemExit(
            f"Kafka end to end: {counts['read']} output records and {counts['consumed']} input records read "
            f"for {counts['delivered']} acknowledged"
        )
    return lat, direct_lat


if __name__ == "__main__" and sys.argv[1:2] == ["tail"]:
    _tail(sys.argv[2], sys.argv[3], int(sys.argv[4]))
