"""Prints the closing lines of `make test`: each stage's seconds and whether it failed (from the
`--stages` file the Makefile appends `name seconds exit-status` lines to), the names of failed
tests, and one line summing the JUnit XML reports of every runner. A stage can fail with no test
failing (lint, a build): the stages' line says which."""

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def counts(report: Path) -> tuple[int, int, int, list[str]]:
    root = ET.parse(report).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    tests = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    names = [
        f"{case.get('classname', '')} :: {case.get('name', '')}"
        for suite in suites
        for case in suite.iter("testcase")
        if case.find("failure") is not None or case.find("error") is not None
    ]
    return tests, failed, skipped, names


def stages(path: Path) -> str:
    """`stages: lint 12 s, scala 1204 s FAILED, ...`, in the order they ran."""
    parts = []
    for line in path.read_text().splitlines() if path.exists() else []:
        name, seconds, status = line.split()
        parts.append(f"{name} {seconds} s" + ("" if status == "0" else f" FAILED (exit {status})"))
    return "stages: " + (", ".join(parts) if parts else "none recorded")


def canceled(d: Path) -> int:
    """Tests named canceled in `d` (each once, however often a run appended it)."""
    path = d / "canceled.txt"
    return len({line for line in path.read_text().splitlines() if line.strip()}) if path.exists() else 0


def main(dirs: list[str], stages_file: Path | None = None) -> None:
    tests = failed = skipped = 0
    failures: list[str] = []
    for d in dirs:
        for report in sorted(Path(d).glob("*.xml")):
            t, f, s, names = counts(report)
            tests, failed, skipped = tests + t, failed + f, skipped + s
            failures += names
        skipped += canceled(Path(d))
    passed = tests - failed - skipped
    # The closing line is what a truncated CI log keeps, so the failures' names go just above it.
    for name in failures:
        print(f"failed: {name}")
    if stages_file is not None:
        print(stages(stages_file))
    print(f"total: {passed} passed, {failed} failed, {skipped} skipped")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--stages"]:
        main(args[2:], Path(args[1]))
    else:
        main(args)
