"""This package's version, which is also the connector jar's (python/pyproject.toml holds it)."""

from importlib import metadata

try:
    VERSION: str = metadata.version("spark-gazette")
except metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    import re
    from pathlib import Path

    _pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    VERSION = re.search(r'(?m)^version\s*=\s*"([^"]+)"', _pyproject).group(1)
