"""The user guides and the map of their claims to the tests that check them (docs/evidence.md).

A guide marks a claim with an HTML comment, `<!-- claim: sink-exactly-once -->`, which renders
as nothing; docs/evidence.md keys the same ids, each with the tests that check it. These tests
read files only (no cluster, no Spark): a claim without evidence, evidence of no claim, a test
named in the map that no longer exists, and a test or source file named in a guide all fail.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDES = ("README.md", "docs/source.md", "docs/sink.md", "docs/operations.md")
EVIDENCE = ROOT / "docs" / "evidence.md"

CLAIM = re.compile(r"<!-- claim: ([a-z0-9][a-z0-9-]*) -->")
CLAIM_HEADING = re.compile(r"^### ([a-z0-9][a-z0-9-]*)\s*$")
EVIDENCE_ITEM = re.compile(r"^- `([^`]+)`")
# A test's name: a literal, or literals joined by `+` (a long name split over lines).
SCALA_TEST = re.compile(r'\b(?:test|ignore)\(\s*("(?:[^"\\]|\\.)*"(?:\s*\+\s*"(?:[^"\\]|\\.)*")*)', re.S)
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def scala_test_names(source: str) -> set[str]:
    return {"".join(LITERAL.findall(m)).replace('\\"', '"') for m in SCALA_TEST.findall(source)}


def guide_claims(text: str) -> list[str]:
    return CLAIM.findall(text)


def parse_evidence(text: str) -> dict[str, list[str]]:
    """Claim id -> the evidence listed under its `### id` heading, one `- `ref`` per line. A
    heading of another form ends a claim's list."""
    claims: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("#"):
            m = CLAIM_HEADING.match(line)
            current = m.group(1) if m else None
            if current is not None:
                assert current not in claims, f"docs/evidence.md keys claim {current!r} twice"
                claims[current] = []
            continue
        m = EVIDENCE_ITEM.match(line)
        if m and current is not None:
            claims[current].append(m.group(1))
    return claims


class Sources:
    """What the evidence may name: Scala suites and their tests, pytest functions, make targets."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._suites: dict[str, list[Path]] | None = None

    def suites(self) -> dict[str, list[Path]]:
        if self._suites is None:
            found: dict[str, list[Path]] = {}
            for path in (self.root / "connector-scala" / "src" / "test").rglob("*.scala"):
                for name in re.findall(r"^\s*(?:final\s+)?(?:class|object)\s+(\w+Suite)\b", path.read_text(), re.M):
                    found.setdefault(name, []).append(path)
            self._suites = found
        return self._suites

    def problem(self, ref: str) -> str | None:
        """None if `ref` names something that exists, else what is wrong."""
        if ref.startswith("make "):
            target = ref[len("make ") :].split()[0]
            makefile = (self.root / "Makefile").read_text()
            if not re.search(rf"^{re.escape(target)}:", makefile, re.M):
                return f"the Makefile has no target {target!r}"
            return None
        if ref.startswith("tests/"):
            return self.pytest_problem(ref)
        suite, _, name = ref.partition(": ")
        if not re.fullmatch(r"\w+Suite", suite):
            return "neither a Scala suite, a pytest node id (tests/...) nor a make target"
        files = self.suites().get(suite)
        if not files:
            return f"no Scala suite {suite} under connector-scala/src/test"
        if name:
            names = set().union(*(scala_test_names(f.read_text()) for f in files))
            if name not in names:
                return f"{suite} has no test named {name!r}"
        return None

    def pytest_problem(self, ref: str) -> str | None:
        path, *parts = ref.split("::")
        file = self.root / path
        if not file.is_file():
            return f"no file {path}"
        if not parts:
            return None
        parts[-1] = parts[-1].split("[", 1)[0]  # a parametrized case names its function
        scope: list[ast.stmt] = ast.parse(file.read_text()).body
        for i, part in enumerate(parts):
            kinds = (ast.FunctionDef, ast.AsyncFunctionDef) if i == len(parts) - 1 else (ast.ClassDef,)
            node = next((n for n in scope if isinstance(n, kinds) and n.name == part), None)
            if node is None:
                return f"{path} has no {'test' if i == len(parts) - 1 else 'class'} {part!r}"
            scope = getattr(node, "body", [])
        return None


def map_problems(root: Path) -> list[str]:
    """Every way the guides' claims and docs/evidence.md disagree, or the evidence names nothing."""
    marked: dict[str, list[str]] = {}
    for guide in GUIDES:
        for claim in guide_claims((root / guide).read_text()):
            marked.setdefault(claim, []).append(guide)
    evidence = parse_evidence((root / "docs" / "evidence.md").read_text())
    sources = Sources(root)
    problems = []
    for claim, where in sorted(marked.items()):
        if not evidence.get(claim):
            problems.append(f"{', '.join(sorted(set(where)))}: claim {claim!r} has no evidence in docs/evidence.md")
    for claim, refs in sorted(evidence.items()):
        if claim not in marked:
            problems.append(f"docs/evidence.md: claim {claim!r} is marked in no user guide")
        for ref in refs:
            problem = sources.problem(ref)
            if problem:
                problems.append(f"docs/evidence.md, claim {claim!r}: `{ref}`: {problem}")
    return problems


# What a user guide does not name: the workshop's tests, its source files and harness targets.
WORKSHOP = [
    (re.compile(r"\b[A-Z]\w*Suite\b"), "a Scala suite"),
    (re.compile(r"\b\w+\.scala\b"), "a Scala source file"),
    (re.compile(r"\btests/"), "a path under tests/"),
    (re.compile(r"\btest_\w+"), "a test"),
    (re.compile(r"\b(?:python/spark_gazette|connector-scala)/\S*"), "a source path"),
    (re.compile(r"\b(?:spark_gazette|python)/\w+\.py\b"), "a Python source file"),
    (re.compile(r"\bmake (?:test\S*|chaos\S*|soak|lint|format|options-doc)\b"), "a make target of the test harness"),
    (re.compile(r"\b(?:untested|tested|checked) here\b|\bthe suites\b", re.I), "the project's testing"),
]


def workshop_mentions(text: str) -> list[str]:
    text = CLAIM.sub("", text)
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        for pattern, what in WORKSHOP:
            for m in pattern.finditer(line):
                found.append(f"line {n}: {m.group(0)!r} ({what})")
    return found


def test_every_claim_of_the_user_guides_has_evidence_that_exists():
    problems = map_problems(ROOT)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("guide", GUIDES)
def test_the_user_guide_names_no_test_source_file_or_harness_target(guide):
    found = workshop_mentions((ROOT / guide).read_text())
    assert not found, f"{guide} names the workshop (its evidence belongs in docs/evidence.md):\n" + "\n".join(found)


def test_a_broken_map_is_refused(tmp_path):
    """The map's check fails on each kind of break: built on a copy of the repository's files."""
    for guide in GUIDES:
        (tmp_path / guide).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / guide).write_text("")
    (tmp_path / "Makefile").write_text("demo:\n\techo\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_real():\n    pass\n")
    suite = tmp_path / "connector-scala" / "src" / "test" / "scala" / "XSuite.scala"
    suite.parent.mkdir(parents=True)
    suite.write_text('class XSuite extends AnyFunSuite {\n  test("a real test") {}\n}\n')
    (tmp_path / "docs" / "source.md").write_text("A.<!-- claim: a -->\nB.<!-- claim: b -->\nC.<!-- claim: c -->\n")
    (tmp_path / "docs" / "evidence.md").write_text(
        "# Evidence\n\n### a\n\n- `XSuite: a real test`\n- `tests/test_x.py::test_real`\n- `make demo`\n\n"
        "### b\n\n- `XSuite: a test since renamed`\n- `tests/test_x.py::test_gone`\n- `YSuite`\n- `make chaos`\n"
        "- `tests/test_y.py`\n\n### d\n\n- `XSuite`\n"
    )
    problems = map_problems(tmp_path)
    expected = [
        "claim 'c' has no evidence",
        "claim 'd' is marked in no user guide",
        "has no test named 'a test since renamed'",
        "has no test 'test_gone'",
        "no Scala suite YSuite",
        "no target 'chaos'",
        "no file tests/test_y.py",
    ]
    for e in expected:
        assert any(e in p for p in problems), f"{e!r} not among {problems}"
    assert len(problems) == len(expected), problems


def test_the_workshop_pattern_finds_what_it_refuses():
    text = (
        "Checked by `SinkIntegrationSuite` and `tests/test_sink.py` (`test_exactly_once`); "
        "`JournalDecoder.scala` picks; `python/spark_gazette/streams.py`; `make test-tokens`.\n"
        "Fine: `make demo`, `make quickstart`, `python/examples/rollups.py`, count.py, Spark 4.3.\n"
    )
    found = " ".join(workshop_mentions(text))
    for needle in (
        "SinkIntegrationSuite",
        "tests/",
        "test_exactly_once",
        "JournalDecoder.scala",
        "streams.py",
        "make test-tokens",
    ):
        assert needle in found, needle
    assert "line 2" not in found
