"""The connector's assembly jar that the build made for the Spark installed in this interpreter:
Spark 4.x (Scala 2.13), or Spark 3.5 with Scala 2.12 or 2.13 (see spark_gazette.spark_line)."""

from __future__ import annotations

import glob
import os
from pathlib import Path

from spark_gazette.spark_line import SparkLine, installed_line

ROOT = Path(__file__).resolve().parents[2]

# Where sbt builds each line's assembly (build.sbt: connector, connectorSpark35, connectorSpark35Scala213).
BUILT = {
    SparkLine("4", "2.13"): "connector-scala/target/scala-2.13/spark-gazette-assembly-*.jar",
    SparkLine("3.5", "2.12"): "connector-scala/target/spark-3.5_2.12/scala-2.12/spark-gazette-3.5-assembly-*.jar",
    SparkLine("3.5", "2.13"): "connector-scala/target/spark-3.5_2.13/scala-2.13/spark-gazette-3.5-assembly-*.jar",
}


def built_jars(line: SparkLine | None = None) -> list[str]:
    """The assembly jars built for `line` (the installed Spark's), newest last."""
    jars = glob.glob(str(ROOT / BUILT[line or installed_line()]))
    return sorted(jars, key=os.path.getmtime)  # a version bump leaves the previous jar behind


def assembly_jar() -> str:
    """The newest assembly jar built for the installed Spark; FileNotFoundError where there is none."""
    line = installed_line()
    jars = built_jars(line)
    if not jars:
        target = "make assembly" if line.spark == "4" else "make assembly SPARK=3.5"
        raise FileNotFoundError(
            f"the assembly jar for Spark {line.spark} (Scala {line.scala}) is missing: run `{target}`"
        )
    return jars[-1]
