"""Adding the connector to a SparkSession builder."""

from importlib import resources
from pathlib import Path

from spark_gazette._version import VERSION

MAVEN_COORDINATES = f"io.sparkgazette:spark-gazette_2.13:{VERSION}"
"""The connector's Maven coordinates, for `--packages` and cluster libraries: the same version as
this Python package, whose wheel carries the same jar."""


def jar_path() -> str:
    """The connector's assembly jar bundled in this package."""
    jar = Path(str(resources.files("spark_gazette"))) / "jars" / f"spark-gazette-assembly-{VERSION}.jar"
    if not jar.is_file():
        raise FileNotFoundError(
            f"spark_gazette {VERSION} has no bundled connector jar ({jar.name}): install the wheel that "
            "`make dist` builds, or pass use_maven=True to resolve " + MAVEN_COORDINATES)
    return str(jar)


def configure_spark_with_gazette(builder, use_maven: bool = False):
    """Adds the Gazette connector to a SparkSession builder and returns the builder.

    By default the jar bundled in this package is added to `spark.jars`; with `use_maven=True`
    the connector's Maven coordinates go to `spark.jars.packages` instead (resolved by Spark
    from the local Maven repository or a remote one). Jars or packages already configured are
    kept.

        spark = configure_spark_with_gazette(SparkSession.builder.master("local[2]")).getOrCreate()
    """
    key, value = ("spark.jars.packages", MAVEN_COORDINATES) if use_maven else ("spark.jars", jar_path())
    existing = builder._options.get(key) if hasattr(builder, "_options") else None
    return builder.config(key, f"{existing},{value}" if existing else value)
