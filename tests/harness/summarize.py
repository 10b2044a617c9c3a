"""Prints one closing line for the whole run from the JUnit XML reports of every runner."""

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


def main(dirs: list[str]) -> None:
    tests = failed = skipped = 0
    failures: list[str] = []
    for d in dirs:
        for report in sorted(Path(d).glob("*.xml")):
            t, f, s, names = counts(report)
            tests, failed, skipped = tests + t, failed + f, skipped + s
            failures += names
    passed = tests - failed - skipped
    # The closing line is what a truncated CI log keeps, so the failures' names go just above it.
    for name in failures:
        print(f"failed: {name}")
    print(f"total: {passed} passed, {failed} failed, {skipped} skipped")


if __name__ == "__main__":
    main(sys.argv[1:])
