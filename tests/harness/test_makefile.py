"""What `make test` runs, read from make's own database (`make -pq` runs no recipe)."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def variables() -> dict[str, str]:
    out = subprocess.run(["make", "-pq"], cwd=ROOT, capture_output=True, text=True).stdout
    return {m[1]: m[2] for m in re.finditer(r"^([A-Z0-9_]+) :?= ?(.*)$", out, re.M)}


def test_the_suites_the_spark_4_stage_deselects_are_named_and_the_micro_batch_chaos_runs_on_spark_35():
    found = variables()
    deselected = re.findall(r"--deselect \$\(([A-Z0-9_]+)\)", (ROOT / "Makefile").read_text())
    assert deselected, "make test deselects nothing by name: this test reads the wrong recipe"
    for name in deselected:
        assert found.get(name, "").strip(), f"{name} is empty where make test reads it"
    assert found["MICRO_BATCH_CHAOS"] in found["SPARK35_PYTHON_SUITES"].split(), (
        "the micro-batch kill chaos, deselected on Spark 4, runs on Spark 3.5 in no stage"
    )


def prerequisites(target: str) -> list[str]:
    out = subprocess.run(["make", "-pq"], cwd=ROOT, capture_output=True, text=True).stdout
    found = re.search(rf"^{re.escape(target)}:(.*)$", out, re.M)
    assert found, f"make knows no target {target}"
    return found[1].split()


def test_the_demo_and_the_quick_start_install_only_their_part():
    """`make demo` and `make quickstart` run `setup-demo`, never the suites' setup (MinIO,
    toxiproxy, Spark 3.5 and the rest cost a fresh machine minutes the demo does not use)."""
    for target in ("demo", "quickstart"):
        assert prerequisites(target) == ["setup-demo"], f"make {target} needs {prerequisites(target)}"
    assert prerequisites("setup-demo") == []
    assert "build/setup.sh demo $(SPARK)" in (ROOT / "Makefile").read_text()
    assert "setup" in prerequisites("test")


def test_every_target_that_runs_pytest_installs_the_package_first():
    """The suites' conftest imports `spark_gazette`: a target running pytest on a fresh clone must
    install it (the `jar` prerequisite, or the jar and package built in its own recipe)."""
    text = (ROOT / "Makefile").read_text()
    rules = re.finditer(r"^([a-z0-9-]+):([^=\n]*)\n((?:\t.*\n|#.*\n|\n)*)", text, re.M)
    checked = []
    for rule in rules:
        target, recipe = rule[1], rule[3]
        if "-m pytest" not in recipe:
            continue
        checked.append(target)
        before = recipe[: recipe.index("-m pytest")]
        installs = "jar" in rule[2].split() or "$(build_jar)" in before or "python-package" in before
        assert installs, f"make {target} runs pytest without installing spark_gazette first"
    assert "test-stores" in checked and "test-tokens" in checked, checked
