"""Which jar of the wheel serves the installed Spark: its line read off the Spark a session would
run ($SPARK_HOME, else pyspark), and its Scala off the scala-library jar there."""

import pytest

from spark_gazette.spark_line import LINES, SparkLine, UnsupportedSparkError, installed_line, line_of


def test_each_spark_line_has_its_artifact_as_the_ecosystem_names_them():
    assert [line.artifact for line in LINES] == [
        "spark-gazette_2.13",
        "spark-gazette-3.5_2.12",
        "spark-gazette-3.5_2.13",
    ]
    assert line_of("4.0.5", "2.13.16") == line_of("4.3.0", "2.13.18") == SparkLine("4", "2.13")
    assert line_of("3.5.9", "2.12.18").artifact == "spark-gazette-3.5_2.12"
    assert line_of("3.5.1", "2.13.8").artifact == "spark-gazette-3.5_2.13"


def test_a_spark_of_no_line_is_refused_naming_the_lines_there_are():
    for spark, scala in (("3.4.3", "2.12.17"), ("4.0.0", "2.12.18"), ("5.0.0", "2.13.18")):
        with pytest.raises(UnsupportedSparkError) as e:
            line_of(spark, scala)
        assert f"Spark {spark} with Scala {scala}" in str(e.value) and "spark-gazette-3.5_2.12" in str(e.value)


def test_spark_home_decides_over_the_pyspark_package(tmp_path, monkeypatch):
    jars = tmp_path / "jars"
    jars.mkdir()
    (jars / "scala-library-2.12.18.jar").touch()
    (jars / "spark-core_2.12-3.5.9.jar").touch()
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    assert installed_line() == SparkLine("3.5", "2.12")
    (jars / "scala-library-2.12.18.jar").unlink()
    (jars / "scala-library-2.13.8.jar").touch()
    (jars / "spark-core_2.12-3.5.9.jar").rename(jars / "spark-core_2.13-3.5.9.jar")
    assert installed_line() == SparkLine("3.5", "2.13")
