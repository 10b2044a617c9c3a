"""Prints one closing line for the whole run from the JUnit XML reports of every runner."""

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def counts(report: Path) -> tuple[int, int, int]:
    root = ET.parse(report).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    tests = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    return tests, failed, skipped


def main(dirs: list[str]) -> None:
    tests = failed = skipped = 0
    for d in dirs:
        for report in sorted(Path(d).glob("*.xml")):
            t, f, s = counts(report)
            tests, failed, skipped = tests + t, failed + f, skipped + s
    passed = tests - failed - skipped
    print(f"total: {passed} passed, {failed} failed, {skipped} skipped")


if __name__ == "__main__":
    main(sys.argv[1:])
