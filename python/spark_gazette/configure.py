"""Adding the connector to a SparkSession builder."""

from importlib import resources
from pathlib import Path

MAVEN_COORDINATES = "io.sparkgazette:spark-gazette_2.13:0.1.0-SNAPSHOT"


def jar_path() -> str:
    """The connector's assembly jar bundled in this package."""
    jars = sorted(Path(str(resources.files("spark_gazette") / "jars")).glob("spark-gazette-assembly-*.jar"))
    if not jars:
        raise FileNotFoundError(
            "spark_gazette has no bundled connector jar: build it with `make assembly` and reinstall the "
            "package, or pass use_maven=True to resolve " + MAVEN_COORDINATES)
    return str(jars[-1])


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
