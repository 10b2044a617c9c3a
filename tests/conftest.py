"""Where the Python suites find a Gazette cluster.

In order: an externally managed broker named by `GAZETTE_BROKER` (the docker-compose `tests`
service sets it); docker-compose through testcontainers when asked with `GAZETTE_COMPOSE=1`
(`make test-compose`); otherwise the local harness, starting etcd and a broker as processes on
loopback. Compose is opt-in: a Docker engine that happens to run on the machine does not move a
plain `pytest` off the local harness.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "harness"))
# Python UDFs run in worker processes: the same interpreter and packages as the tests.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import jars  # noqa: E402
from cluster import LocalCluster, find_binary  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "tests" / "specs" / "examples.yaml"


def pytest_sessionstart(session) -> None:
    """The suites load the connector's jar from the installed `spark_gazette` package: a jar
    built since and not installed (`make python-package`) would have them test old code."""
    built = jars.built_jars()
    if not built:
        return  # no build here (a container running the suites against an installed package)
    try:
        from spark_gazette.configure import jar_path

        installed = Path(jar_path())
    except Exception:  # noqa: BLE001 - no package installed: the suites say so themselves
        return
    newest = built[-1]
    if not same_bytes(Path(newest), installed):
        raise pytest.UsageError(
            f"{installed} is not the jar built at {newest}: run `make python-package` "
            "(or `make test-python`) so that the suites test the code as built"
        )


def same_bytes(a: Path, b: Path) -> bool:
    if a.stat().st_size != b.stat().st_size:
        return False
    with open(a, "rb") as x, open(b, "rb") as y:
        while True:
            u, v = x.read(1 << 20), y.read(1 << 20)
            if u != v:
                return False
            if not u:
                return True


def compose_requested() -> bool:
    """`GAZETTE_COMPOSE=1` asks for compose; it fails loudly when Docker cannot serve it."""
    if os.environ.get("GAZETTE_COMPOSE", "") in ("", "0"):
        return False
    if not shutil.which("docker"):
        pytest.fail("GAZETTE_COMPOSE is set, but there is no docker client")
    for cmd in (["docker", "info"], ["docker", "compose", "version"]):
        if subprocess.run(cmd, capture_output=True).returncode != 0:
            pytest.fail(f"GAZETTE_COMPOSE is set, but `{' '.join(cmd)}` fails")
    return True


@pytest.fixture(scope="session")
def gazette_broker():
    """The endpoint of a broker serving the journals of tests/specs/examples.yaml."""
    if os.environ.get("GAZETTE_BROKER"):
        yield os.environ["GAZETTE_BROKER"]
    elif compose_requested():
        from testcontainers.compose import DockerCompose

        with DockerCompose(
            context=str(ROOT / "docker"),
            compose_file_name="docker-compose.yml",
            build=os.environ.get("GAZETTE_COMPOSE_BUILD", "1") != "0",
            wait=True,
        ) as compose:
            host, port = compose.get_service_host_and_port("gazette", 8080)
            yield f"http://{host}:{port}"
    else:
        with LocalCluster(brokers=1) as cluster:
            cluster.apply(SPECS.read_text())
            yield cluster.broker


def local_binaries() -> bool:
    try:
        LocalCluster(brokers=0)
        return True
    except FileNotFoundError:
        return False


# `GAZETTE_LOCAL_BINARIES=required` (make test, whose setup installs them, and the compose runner,
# whose image has them) turns the skip off: the tests then run and fail on what is missing instead
# of passing as skipped. Run by hand without it, the suites skip on a machine without them.
requires_local_binaries = pytest.mark.skipif(
    os.environ.get("GAZETTE_LOCAL_BINARIES") != "required" and not local_binaries(),
    reason="etcd/gazette are not installed here (run `make setup`)",
)


def _installed(binary: str) -> bool:
    try:
        return bool(find_binary(binary))
    except FileNotFoundError:
        return False


# The network faults need root (namespaces, nftables), nft and toxiproxy-server (make setup).
# `GAZETTE_NETWORK_FAULTS=required` (make test) runs them wherever, failing on what is missing.
requires_network_faults = pytest.mark.skipif(
    os.environ.get("GAZETTE_NETWORK_FAULTS") != "required"
    and (os.geteuid() != 0 or not shutil.which("nft") or not _installed("toxiproxy-server")),
    reason="network faults need root, nft and toxiproxy-server (run `make setup` as root)",
)


def assembly_jar() -> str:
    """The connector's assembly jar for the installed Spark, which `make test` builds before the Python suites."""
    try:
        return jars.assembly_jar()
    except FileNotFoundError as e:
        pytest.fail(f"{e} (make test builds it)")


def local_spark(app: str, master: str = "local[2]"):
    """A local classic SparkSession with the assembly jar; the caller stops it."""
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.jars", assembly_jar())
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )


@pytest.fixture(scope="module")
def cluster():
    """A one-broker local cluster for the module's tests; modules that need journals made
    before their tests start define their own."""
    with LocalCluster(brokers=1) as c:
        yield c


@pytest.fixture(scope="module")
def spark(request):
    """A local classic SparkSession with the assembly jar, named after the test module."""
    session = local_spark(request.module.__name__)
    yield session
    session.stop()


def condition_of(error) -> str:
    """A Spark error's condition, of pyspark's exception or of a JVM SparkThrowable through py4j:
    `getCondition()` from Spark 4.0, `getErrorClass()` before (3.5 has no `getCondition`)."""
    import pyspark

    return error.getCondition() if pyspark.__version__ >= "4" else error.getErrorClass()


def option_error(call, condition: str, option: str, value: str | None = None) -> Exception:
    """The connector's refusal of an option, raised by `call()`: Spark's exception (pyspark's
    IllegalArgumentException, AnalysisException, ...) with the stable `condition`, naming the
    camelCase `option` and, quoted as the connector quotes it, `value`."""
    from pyspark.errors import PySparkException

    with pytest.raises(PySparkException) as e:
        call()
    message = str(e.value)
    assert condition_of(e.value) == condition, message
    assert f"'{option}'" in message, message
    assert value is None or f"'{value}'" in message, message
    return e.value


def spark_throwables(error) -> list:
    """The JVM SparkThrowables along the cause chain of a PySpark `error`, outermost first: the
    JVM exception PySpark converted, then its causes (a stream's failure wraps the connector's
    once, a task's twice: see test_errors.py)."""
    from py4j.java_gateway import is_instance_of
    from pyspark import SparkContext

    found = []
    throwable = getattr(error, "_origin", None)  # the JVM exception behind a converted PySpark error
    while throwable is not None:
        if is_instance_of(SparkContext._gateway, throwable, "org.apache.spark.SparkThrowable"):
            found.append(throwable)
        throwable = throwable.getCause()
    return found


def gazette_cause(error, condition: str):
    """The connector's JVM exception carrying `condition` on the cause chain of the PySpark `error`,
    or None. Its `getMessageParameters()` names the journal, offset, reason... as the message does."""
    return next((t for t in spark_throwables(error) if condition_of(t) == condition), None)
