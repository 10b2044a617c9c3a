"""The wheel carries the connector's jar; building one without it would install a package that
cannot reach Gazette, so the build stops and says how to get the jar."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

JARS = Path(__file__).parent / "spark_gazette" / "jars"


class BuildWithJar(build_py):
    def run(self):
        version = self.distribution.get_version()
        jar = JARS / f"spark-gazette-assembly-{version}.jar"
        if not jar.is_file():
            raise SystemExit(
                f"spark_gazette {version} carries the connector jar {jar.name}, which is not in "
                f"{jar.parent}. From the repository's root, run `make dist` (the wheel lands in "
                "target/dist/) or `make assembly` (installs into .venv), or install a released wheel. "
                "On a cluster that already has the connector, the Maven coordinates "
                f"io.sparkgazette:spark-gazette_2.13:{version} work with --packages."
            )
        super().run()


# The jars package is a build output (git ignores it); made here so that a clean clone reaches
# the check above instead of failing on a missing package directory.
JARS.mkdir(exist_ok=True)
setup(cmdclass={"build_py": BuildWithJar})
