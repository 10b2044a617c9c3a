"""build/setup.sh's virtualenv stamps: a virtualenv is installed again whenever what its
requirements file installs changes, a file it includes (`-r`) too. The script's own `venv` function
runs here on a virtualenv whose pip only records what it is asked."""

import subprocess
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def functions() -> str:
    """setup.sh's `requirements_closure` and `venv`, as written there."""
    script = (ROOT / "build" / "setup.sh").read_text().splitlines()
    out, inside = [], False
    for line in script:
        if line.startswith(("requirements_closure()", "requirements_hash()", "venv()")):
            inside = True
        if inside:
            out.append(line)
            if line == "}":
                inside = False
    assert any(line.startswith("venv()") for line in out), "setup.sh has no venv function"
    return "\n".join(out)


def run_venv(work: Path, req: str) -> None:
    script = "set -euo pipefail\nsay() { :; }\n" + functions() + f"\nvenv .venv {req}\n"
    subprocess.run(["bash", "-c", script], cwd=work, check=True)


def test_a_change_to_an_included_requirements_file_installs_the_including_ones_virtualenv_again(tmp_path):
    (tmp_path / "python").mkdir()
    demo = tmp_path / "python" / "requirements-demo.txt"
    dev = tmp_path / "python" / "requirements-dev.txt"
    demo.write_text("pyspark==4.3.0\n")
    dev.write_text("-r requirements-demo.txt\npytest==9.2.0\n")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text("#!/bin/sh\n")
    (bin_dir / "pip").write_text(
        textwrap.dedent(
            """\
            #!/bin/sh
            echo "$*" >> "$(dirname "$0")/../pip.log"
            """
        )
    )
    for f in ("python", "pip"):
        (bin_dir / f).chmod(0o755)
    log = tmp_path / ".venv" / "pip.log"

    run_venv(tmp_path, "python/requirements-dev.txt")  # make test on a fresh machine
    assert log.read_text().count("install") == 1
    demo.write_text("pyspark==4.3.1\n")  # Spark's version moves, in the file the demo and the suites share
    run_venv(tmp_path, "python/requirements-dev.txt")  # make test again
    assert log.read_text().count("install") == 2, (
        ".venv was not installed again after requirements-demo.txt (included by requirements-dev.txt) changed: "
        f"pip was asked {log.read_text()!r}"
    )
    run_venv(tmp_path, "python/requirements-demo.txt")  # make demo after make test: nothing to install
    assert log.read_text().count("install") == 2, f"pip was asked again: {log.read_text()!r}"
    dev.write_text("-r requirements-demo.txt\npytest==9.2.1\n")
    run_venv(tmp_path, "python/requirements-demo.txt")  # the suites' change is none of the demo's business
    assert log.read_text().count("install") == 2, f"pip was asked again: {log.read_text()!r}"
