"""The wheel carries the connector's jars, one per Spark line; building one without the Spark 4
jar would install a package that cannot reach Gazette, so the build stops and says how to get it.
`make python-package` copies in the jars that were built; `make dist` builds and copies all three.
The helpers' option keywords are generated into the package from the connector's declaration of
its options (generate_helpers.py)."""

import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

JARS = Path(__file__).parent / "spark_gazette" / "jars"


class BuildWithJar(build_py):
    def run(self):
        version = self.distribution.get_version()
        if not list(JARS.glob(f"spark-gazette*-{version}.jar")):
            raise SystemExit(
                f"spark_gazette {version} carries the connector jar of each Spark line "
                f"(spark-gazette_2.13-{version}.jar for Spark 4, spark-gazette-3.5_2.12-{version}.jar for Spark 3.5), "
                f"and {JARS} has none. From the repository's root, run `make dist` (the wheel lands in "
                "target/dist/) or `make assembly` (installs into .venv), or install a released wheel. "
                "On a cluster that already has the connector, the Maven coordinates "
                f"io.sparkgazette:spark-gazette_2.13:{version} (Spark 4) or io.sparkgazette:spark-gazette-3.5_2.12:"
                f"{version} (Spark 3.5) work with --packages."
            )
        super().run()
        sys.path.insert(0, str(Path(__file__).parent))
        from generate_helpers import generate

        for path in generate(Path(self.build_lib) / "spark_gazette"):
            print(f"generated {path}")


# The jars package is a build output (git ignores it); made here so that a clean clone reaches
# the check above instead of failing on a missing package directory.
JARS.mkdir(exist_ok=True)
setup(cmdclass={"build_py": BuildWithJar})
