"""Which build of the connector serves the Spark installed here.

The connector is built once per Spark line, as the ecosystem names them: `spark-gazette_2.13` for
Spark 4.x, `spark-gazette-3.5_2.12` and `spark-gazette-3.5_2.13` for Spark 3.5. The wheel carries
each jar; the line is read off the Spark a session will start: `$SPARK_HOME` where it is set (as
pyspark itself does), else the pyspark package, and its Scala off the scala-library jar there.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from spark_gazette._version import VERSION

GROUP = "io.sparkgazette"


class SparkLine(NamedTuple):
    """A Spark line the connector is built for: Spark's major.minor ("4" for all of 4.x) and Scala's."""

    spark: str
    scala: str

    @property
    def artifact(self) -> str:
        return f"spark-gazette_{self.scala}" if self.spark == "4" else f"spark-gazette-{self.spark}_{self.scala}"

    @property
    def coordinates(self) -> str:
        return f"{GROUP}:{self.artifact}:{VERSION}"

    @property
    def jar_name(self) -> str:
        return f"{self.artifact}-{VERSION}.jar"


LINES = (SparkLine("4", "2.13"), SparkLine("3.5", "2.12"), SparkLine("3.5", "2.13"))
DEFAULT = LINES[0]


class UnsupportedSparkError(RuntimeError):
    """The installed Spark is of a line the connector is not built for."""


def line_of(spark_version: str, scala_version: str) -> SparkLine:
    """The line of Spark `spark_version` (e.g. "3.5.9") built with Scala `scala_version` ("2.12")."""
    major_minor = ".".join(spark_version.split(".")[:2])
    spark = "4" if major_minor.startswith("4.") else major_minor
    line = SparkLine(spark, ".".join(scala_version.split(".")[:2]))
    if line not in LINES:
        raise UnsupportedSparkError(
            f"the Gazette connector has no build for Spark {spark_version} with Scala {scala_version}; it has "
            + ", ".join(
                f"{line.artifact} (Spark {'4.x' if line.spark == '4' else line.spark}, Scala {line.scala})"
                for line in LINES
            )
        )
    return line


def installed_line() -> SparkLine:
    """The line of the Spark a session started here would run, or DEFAULT where there is none to read."""
    found = _installed_spark()
    return line_of(*found) if found else DEFAULT


def bundled_jar(line: SparkLine | None = None) -> str | None:
    """The jar this package carries for `line` (the installed Spark's), or None when it carries none."""
    line = line or installed_line()
    jar = Path(str(resources.files("spark_gazette"))) / "jars" / line.jar_name
    return str(jar) if jar.is_file() else None


def _installed_spark() -> tuple[str, str] | None:
    try:
        import pyspark
    except ImportError:
        return None
    home = os.environ.get("SPARK_HOME")
    jars = Path(home) / "jars" if home else Path(pyspark.__file__).parent / "jars"
    scala = next(
        (
            m.group(1)
            for p in sorted(jars.glob("scala-library-*.jar"))
            if (m := re.match(r"scala-library-(2\.\d+)\.", p.name))
        ),
        None,
    )
    spark = next(
        (
            m.group(1)
            for p in sorted(jars.glob("spark-core_*.jar"))
            if (m := re.match(r"spark-core_[\d.]+-(\d+\.\d+\.\d+)", p.name))
        ),
        pyspark.__version__,
    )
    return (spark, scala) if scala else None
