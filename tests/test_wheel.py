"""The wheel as a user installs it: built from python/ (which `make test` fills with the jar),
installed into a fresh virtualenv that has nothing but pyspark, then a write and a read against a
real broker, judged by Gazette's own reader. pip's cache makes the fresh virtualenv cheap."""

import json
import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

import jars
import judge
from cluster import LocalCluster
from conftest import ROOT, requires_local_binaries
from specs import journal_specs

pytestmark = requires_local_binaries


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT / "python")],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = out.glob("spark_gazette-*.whl")
    return wheel


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory, wheel) -> Path:
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    pyspark = f"pyspark=={metadata.version('pyspark')}"
    out = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", pyspark, str(wheel)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return python


def test_the_wheel_is_named_after_the_one_version_and_carries_that_jar_for_each_spark_line(wheel):
    """It carries the jar of each Spark line built (`make test` builds Spark 4's and Spark 3.5 / Scala 2.12's,
    `make dist` all three)."""
    import zipfile

    version = wheel.name.split("-")[1]
    pyproject = (ROOT / "python" / "pyproject.toml").read_text()
    assert f'\nversion = "{version}"\n' in pyproject and "SNAPSHOT" not in version
    names = zipfile.ZipFile(wheel).namelist()
    built = {line.artifact for line in jars.BUILT if jars.built_jars(line)}
    assert "spark-gazette_2.13" in built
    carried = sorted(n for n in names if n.endswith(".jar"))
    assert carried == sorted(f"spark_gazette/jars/{a}-{version}.jar" for a in built)
    assert "spark_gazette/py.typed" in names


def test_building_the_package_without_its_jar_fails_and_says_how_to_get_it(tmp_path):
    """What `pip install ./python` meets on a clean clone, where no build has made the jar."""
    import shutil

    source = tmp_path / "python"
    shutil.copytree(ROOT / "python", source, ignore=shutil.ignore_patterns("jars", "build", "*.egg-info"))
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "out"), str(source)],
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0 and not list((tmp_path / "out").glob("*.whl"))
    assert "carries the connector jar" in out.stderr + out.stdout and "make dist" in out.stderr + out.stdout


def test_a_fresh_virtualenv_with_only_pyspark_writes_and_reads_with_the_wheel(fresh_venv, tmp_path):
    with LocalCluster(brokers=1) as cluster:
        cluster.apply(journal_specs("wheel/", ["events"]))
        job = tmp_path / "job.py"
        job.write_text(
            textwrap.dedent(f"""
            import json
            from importlib import metadata
            from pyspark.sql import SparkSession
            import spark_gazette
            from spark_gazette import MAVEN_COORDINATES, configure_spark_with_gazette, jar_path, read, write
            spark = configure_spark_with_gazette(SparkSession.builder.master("local[1]")
                                                 .config("spark.ui.enabled", "false")).getOrCreate()
            b = {cluster.broker!r}
            write(spark.createDataFrame([(json.dumps({{"n": i}}),) for i in range(20)], ["value"]),
                  broker=b, journal="wheel/events")
            rows = (read(spark, broker=b, journals="wheel/events")
                    .selectExpr("CAST(value AS STRING) AS v", "uuid").collect())
            print("RESULT " + json.dumps({{"values": [json.loads(r.v)["n"] for r in rows],
                                           "uuids": [r.uuid for r in rows],
                                           "package": spark_gazette.__file__, "jar": jar_path(),
                                           "coordinates": MAVEN_COORDINATES,
                                           "version": metadata.version("spark-gazette"),
                                           "dists": sorted(d.metadata["Name"].lower()
                                                           for d in metadata.distributions())}}))
            spark.stop()
        """)
        )
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "VIRTUAL_ENV")}
        env["PYSPARK_PYTHON"] = str(fresh_venv)
        out = subprocess.run(
            [str(fresh_venv), str(job)], capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path
        )
        assert out.returncode == 0, out.stderr[-3000:]
        result = json.loads(next(line for line in out.stdout.splitlines() if line.startswith("RESULT "))[7:])
        venv = str(fresh_venv.parent.parent)
        assert result["package"].startswith(venv) and result["jar"].startswith(venv)
        # The installed pyspark's line: 4.x is Scala 2.13's, the pyspark 3.5 wheel Scala 2.12's.
        artifact = "spark-gazette_2.13" if metadata.version("pyspark").startswith("4.") else "spark-gazette-3.5_2.12"
        assert result["coordinates"] == f"io.sparkgazette:{artifact}:{result['version']}"
        assert result["jar"].endswith(f"/{artifact}-{result['version']}.jar")
        assert set(result["dists"]) <= {"pyspark", "py4j", "spark-gazette", "pip", "setuptools"}
        assert sorted(result["values"]) == list(range(20)) and all(result["uuids"])
        committed = judge.read(cluster.broker, "wheel/events")
        assert sorted(json.loads(r["payload"])["n"] for r in committed) == list(range(20))


def test_the_published_pom_is_complete_for_maven_central_and_lists_no_dependencies():
    """`make test` publishes to ~/.m2 what `make dist` publishes to target/dist/maven."""
    import xml.etree.ElementTree as ET

    from spark_gazette import MAVEN_COORDINATES

    group, artifact, version = MAVEN_COORDINATES.split(":")
    pom = Path.home() / ".m2/repository" / group.replace(".", "/") / artifact / version / f"{artifact}-{version}.pom"
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    root = ET.parse(pom).getroot()
    assert root.find("m:version", ns).text == version
    for required in (
        "name",
        "description",
        "url",
        "licenses/m:license/m:name",
        "scm/m:url",
        "scm/m:connection",
        "developers/m:developer/m:name",
    ):
        node = root.find("m:" + required, ns)
        assert node is not None and node.text, required
    assert root.find("m:dependencies", ns) is None
