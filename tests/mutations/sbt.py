"""One sbt shell, driven through its stdin, so that every mutation pays for compiling and
running its suites but not for starting sbt and loading the build again.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

# The shell's prompt may precede it on the same line.
DONE = re.compile(r"\[(success|error)\] Total time: ")
# A test as ScalaTest's reporter lists it (build.sbt's -oD adds its duration).
TEST = re.compile(r"^\[info\] - (.*?)(?: \*\*\* FAILED \*\*\*)?(?: \(\d[^()]*\))?$")
VERDICT = re.compile(r"\*\*\* (FAILED|ABORTED) \*\*\*")


@dataclass
class Result:
    ok: bool
    timed_out: bool
    output: list[str]

    @property
    def tests(self) -> list[str]:
        """The names of the tests that ran, as ScalaTest's reporter lists them."""
        return [m.group(1) for line in self.output if (m := TEST.match(line))]


class Shell:
    """sbt's shell in `root`; everything it prints is appended to `log`."""

    def __init__(self, root: Path, log: Path):
        self.root = root
        self.log = log.open("a")
        self.proc: subprocess.Popen[str] | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.commands = 0

    def __enter__(self) -> Shell:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
        self.log.close()

    def start(self) -> None:
        self.lines = queue.Queue()
        self.proc = subprocess.Popen(
            ["build/sbt", "-Dsbt.log.noformat=true"],
            cwd=self.root,
            env=dict(os.environ, SBT_STDIN="keep"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            # Its own process group, so that a hung suite's forked JVM goes with it.
            start_new_session=True,
        )
        threading.Thread(target=self._read, args=(self.proc, self.lines), daemon=True).start()

    def _read(self, proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.log.write(line)
            self.log.flush()
            lines.put(line.rstrip("\n"))
        lines.put(None)

    def run(self, command: str, timeout: float) -> Result:
        """Runs `command` and waits for it. sbt's shell says nothing when it is ready for the next
        command, so a `help` for a name no command has follows each one: its answer marks the end.
        """
        if self.proc is None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        self.commands += 1
        marker = f"mutations-marker-{self.commands}"
        self.log.write(f"\n>>> {command}\n")
        self.proc.stdin.write(f"{command}\nhelp {marker}\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        output: list[str] = []
        ok = False
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.stop(force=True)
                return Result(False, True, output)
            if line is None:
                self.proc = None
                raise RuntimeError(f"sbt exited while running {command!r}; see {self.log.name}")
            if marker in line:
                return Result(ok, False, output)
            output.append(line)
            done = DONE.search(line)
            if done:
                ok = done.group(1) == "success"

    def stop(self, force: bool = False) -> None:
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        if not force:
            try:
                assert proc.stdin is not None
                proc.stdin.write("exit\n")
                proc.stdin.flush()
                proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if proc.poll() is None:
            # A hung suite: sbt, and with it the suite's forked JVM (whose brokers follow it).
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def first_failure(reports: Path, output: list[str]) -> tuple[str, str]:
    """The first failed test (suite: test) and the first line of its message, from the JUnit
    reports sbt writes; or, when a suite died before writing one, from sbt's output.
    """
    for xml in sorted(reports.glob("*.xml")):
        for case in ET.parse(xml).getroot().iter("testcase"):
            failure = case.find("failure")
            if failure is None:
                failure = case.find("error")
            if failure is not None:
                suite = (case.get("classname") or xml.stem).rsplit(".", 1)[-1]
                text = (failure.get("message") or failure.text or "").strip()
                text = text.removeprefix("org.scalatest.exceptions.TestFailedException: ")
                return f"{suite}: {case.get('name')}", text.splitlines()[0] if text else ""
    for line in output:
        if VERDICT.search(line):
            return line.removeprefix("[info] ").strip(), ""
    errors = [line for line in output if line.startswith("[error]")]
    return "(no test failed)", errors[0] if errors else ""
