"""`make test-mutations`: shows that the suites bite.

Applies each mutation of mutations.py, alone, to a copy of the working tree (target/mutations/tree,
kept between runs so that sbt compiles incrementally; the working tree is never touched), and
runs the suites named for it in one sbt shell until one fails. The suites run unmutated first:
a suite that fails already would catch anything. Prints a table (mutation, the test that caught
it, seconds) and exits non-zero if a mutation survives, does not compile, or the baseline fails.

    --check               only checks that every snippet occurs once, without sbt
    --no-baseline         skips the unmutated run (make test, whose suites have just run unmutated)
    --junit DIR           writes DIR/mutations.xml, a test case per mutation, for make test's summary
    MUTATIONS=name,name   run some mutations only
    MUTATIONS_SAMPLE=k    run a sample of about k: the list dealt into ceil(n / k) groups, one
                          mutation in every ceil(n / k), and the group MUTATIONS_SEED picks (seed
                          modulo the groups); consecutive seeds cover the whole list
    MUTATIONS_SEED=s      the sample's seed (drawn at random, and printed, when not given)
    MUTATION_TIMEOUT=900  seconds a suite may take before it counts as hung (a hang is a catch)
"""

from __future__ import annotations

import math
import os
import random
import shutil
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import sbt
import tree
from mutations import MAIN, MUTATIONS, Mutation, Suite

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "target" / "mutations"
COPY = WORK / "tree"
REPORTS = COPY / "connector-scala" / "target" / "test-reports"
COMPILE_TIMEOUT = 1800.0


@dataclass
class Outcome:
    mutation: Mutation
    caught: bool
    by: str
    message: str
    seconds: float


def selected() -> list[Mutation]:
    wanted = [n.strip() for n in os.environ.get("MUTATIONS", "").split(",") if n.strip()]
    names = {m.name for m in MUTATIONS}
    unknown = [n for n in wanted if n not in names]
    if unknown:
        sys.exit(f"unknown mutations: {', '.join(unknown)}; known: {', '.join(sorted(names))}")
    chosen = [m for m in MUTATIONS if not wanted or m.name in wanted]
    k = os.environ.get("MUTATIONS_SAMPLE", "")
    if not k:
        return chosen
    seed = int(os.environ.get("MUTATIONS_SEED") or random.SystemRandom().randrange(1 << 31))
    part, group, groups = sample(chosen, int(k), seed)
    print(f"sample {group + 1} of {groups} (MUTATIONS_SEED={seed}): {', '.join(m.name for m in part)}", flush=True)
    return part


def sample(mutations: list[Mutation], k: int, seed: int) -> tuple[list[Mutation], int, int]:
    """The group of `mutations` that `seed` picks, out of ceil(n / k) groups of about k: one in
    every ceil(n / k), so that each group mixes the list's areas (the list keeps a file's
    mutations together), and consecutive seeds cover the whole list. Returns the group, its
    number and the number of groups.
    """
    groups = max(1, math.ceil(len(mutations) / max(1, k)))
    group = seed % groups
    return [m for i, m in enumerate(mutations) if i % groups == group], group, groups


def source(m: Mutation) -> tuple[Path, str]:
    """The file `m` changes and its text, which must hold `m.find` exactly once: a refactoring
    that moves the snippet must not quietly turn the mutation off.
    """
    path = COPY / MAIN / m.file
    if not path.exists():
        sys.exit(f"mutation {m.name}: {MAIN}{m.file} does not exist")
    text = path.read_text()
    found = text.count(m.find)
    if found != 1:
        sys.exit(f"mutation {m.name}: the snippet occurs {found} times in {MAIN}{m.file}, not once:\n  {m.find}")
    return path, text


def run_suite(shell: sbt.Shell, suite: Suite, timeout: float) -> tuple[bool, str, str]:
    """Runs `suite`: whether it passed, and if not, the test that failed and its message."""
    shutil.rmtree(REPORTS, ignore_errors=True)
    result = shell.run(suite.command(), timeout)
    if result.timed_out:
        return False, f"{suite.name}: hung for {timeout:.0f} s", ""
    # A suite or filter that runs nothing passes whatever the code does.
    ran = result.tests
    missing = [t for t in suite.tests if not any(t in name for name in ran)]
    if result.ok and (not ran or missing):
        named = f" named {', '.join(missing)}" if missing else ""
        sys.exit(f"{suite} runs no test{named}: a suite or test renamed?")
    if result.ok:
        return True, "", ""
    by, message = sbt.first_failure(REPORTS, result.output)
    return False, by, message


def together(suites: list[Suite]) -> list[Suite]:
    """The suites once each, with the tests every mention of it runs: one cluster and one
    Spark session per integration suite.
    """
    merged: dict[str, Suite] = {}
    for s in suites:
        seen = merged.get(s.name)
        whole = s.tests == () or (seen is not None and seen.tests == ())
        tests = () if whole else tuple(dict.fromkeys((seen.tests if seen else ()) + s.tests))
        merged[s.name] = Suite(s.name, tests)
    return list(merged.values())


def baseline(shell: sbt.Shell, mutations: list[Mutation], timeout: float) -> None:
    """Runs the mutations' suites unmutated: one that fails already would catch anything."""
    if not shell.run("connector/Test/compile", COMPILE_TIMEOUT).ok:
        sys.exit(f"the unmutated sources do not compile; see {shell.log.name}")
    suites = together([s for m in mutations for s in m.suites])
    for i, suite in enumerate(suites, 1):
        t0 = time.monotonic()
        passed, by, message = run_suite(shell, suite, timeout)
        print(
            f"baseline [{i}/{len(suites)}] {suite}: {'passes' if passed else 'FAILS'} ({time.monotonic() - t0:.0f} s)",
            flush=True,
        )
        if not passed:
            sys.exit(f"the unmutated suite fails, so it would catch any mutation: {by}\n  {message}")


def mutate(shell: sbt.Shell, m: Mutation, timeout: float) -> Outcome:
    path, original = source(m)
    t0 = time.monotonic()
    path.write_text(original.replace(m.find, m.replace))
    try:
        compiled = shell.run("connector/Test/compile", COMPILE_TIMEOUT)
        if not compiled.ok:
            errors = [line for line in compiled.output if line.startswith("[error]")]
            return Outcome(m, False, "DOES NOT COMPILE", errors[0] if errors else "", time.monotonic() - t0)
        for suite in m.suites:
            passed, by, message = run_suite(shell, suite, timeout)
            if not passed:
                return Outcome(m, True, by, message, time.monotonic() - t0)
        return Outcome(m, False, "SURVIVED", ", ".join(map(str, m.suites)), time.monotonic() - t0)
    finally:
        path.write_text(original)


def junit(outcomes: list[Outcome], directory: Path) -> None:
    """A test case per mutation, failed where it was not caught: make test's closing summary
    counts them with the suites' and names a survivor.
    """
    failed = [o for o in outcomes if not o.caught]
    suite = ET.Element("testsuite", name="mutations", tests=str(len(outcomes)), failures=str(len(failed)))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    for o in outcomes:
        case = ET.SubElement(suite, "testcase", classname="mutations", name=o.mutation.name)
        case.set("time", f"{o.seconds:.1f}")
        if not o.caught:
            ET.SubElement(case, "failure", message=f"{o.by}: {reproduce(o.mutation)}").text = o.message
    directory.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(directory / "mutations.xml", encoding="utf-8", xml_declaration=True)


def reproduce(m: Mutation) -> str:
    return f"make test-mutations MUTATIONS={m.name}"


def table(outcomes: list[Outcome], messages: bool) -> str:
    """One row per mutation; under it, with `messages` or when it was not caught, the message."""
    width = max(len(o.mutation.name) for o in outcomes)
    rows = [f"{'mutation':<{width}}  {'s':>5}  caught by"]
    for o in outcomes:
        rows.append(f"{o.mutation.name:<{width}}  {o.seconds:5.0f}  {o.by}")
        if o.message and (messages or not o.caught):
            rows.append(f"{'':<{width}}         {o.message[:200]}")
    return "\n".join(rows)


def main() -> int:
    args = sys.argv[1:]
    mutations = selected()
    timeout = float(os.environ.get("MUTATION_TIMEOUT", "900"))
    WORK.mkdir(parents=True, exist_ok=True)
    tree.sync(ROOT, COPY)
    for m in mutations:
        source(m)
    if "--check" in args:
        print(f"{len(mutations)} mutations, each snippet found once")
        return 0
    tree.seed_build(ROOT, COPY)
    log = WORK / "sbt.log"
    log.unlink(missing_ok=True)
    print(
        f"{len(mutations)} mutations, applied in {COPY.relative_to(ROOT)}; sbt's output in {log.relative_to(ROOT)}",
        flush=True,
    )
    started = time.monotonic()
    outcomes: list[Outcome] = []
    with sbt.Shell(COPY, log) as shell:
        if "--no-baseline" in args:
            if not shell.run("connector/Test/compile", COMPILE_TIMEOUT).ok:
                sys.exit(f"the unmutated sources do not compile; see {shell.log.name}")
        else:
            baseline(shell, mutations, timeout)
        for i, m in enumerate(mutations, 1):
            o = mutate(shell, m, timeout)
            outcomes.append(o)
            print(f"[{i}/{len(mutations)}] {m.name}: {o.by} ({o.seconds:.0f} s)", flush=True)
    print()
    print(table(outcomes, messages=False))
    failed = [o for o in outcomes if not o.caught]
    minutes = (time.monotonic() - started) / 60
    print(f"\n{len(outcomes) - len(failed)} of {len(outcomes)} mutations caught in {minutes:.1f} minutes")
    (WORK / "report.txt").write_text(table(outcomes, messages=True) + "\n")
    if "--junit" in args:
        junit(outcomes, Path(args[args.index("--junit") + 1]))
    for o in failed:
        print(f"{o.mutation.name} {'survived' if o.by == 'SURVIVED' else o.by}; reproduce: {reproduce(o.mutation)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
