"""Timing and profiling for the benchmark scripts."""

import os
import time


def thread_cpu(pid: int) -> dict[str, tuple[str, float]]:
    """CPU seconds (user and system) of each thread of a running process: thread id -> (name, seconds)."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except (FileNotFoundError, ProcessLookupError):  # the thread ended
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        out[tid] = (name, (int(fields[11]) + int(fields[12])) / tick)
    return out


def cpu_by_thread(before: dict, after: dict, prefix: str | tuple[str, ...]) -> float:
    """CPU seconds spent between two `thread_cpu` readings by the threads whose names start with
    `prefix` (or one of them; Linux keeps 15 characters of a name: "Executor task l", "C2 CompilerThre")."""
    return sum(t - before.get(tid, (n, 0.0))[1] for tid, (n, t) in after.items() if n.startswith(prefix))


def timed(fn, runs: int = 2):
    """(the fastest of `runs` runs of `fn` in seconds, the result of the last run)."""
    best, result = None, None
    for _ in range(runs):
        t = time.monotonic()
        result = fn()
        took = time.monotonic() - t
        best = took if best is None else min(best, took)
    return best, result


def profiled(jvm, directory: str | None, name: str, fn):
    """`fn`, recording a Flight Recorder profile of Spark's JVM into DIRECTORY/NAME.jfr while it
    runs (`fn` itself when `directory` is None)."""
    if not directory:
        return fn
    os.makedirs(directory, exist_ok=True)

    def run(*args, **kwargs):
        recording = jvm.jdk.jfr.Recording(jvm.jdk.jfr.Configuration.getConfiguration("profile"))
        # The profile's 10 ms period leaves a few seconds' read with too few samples.
        recording.enable("jdk.ExecutionSample").withPeriod(jvm.java.time.Duration.ofMillis(1))
        # What the JIT compiles, undoes and loads while the run goes on (the profile keeps only
        # compilations over 100 ms, and no class loads): a batch end competes with them for CPU.
        recording.enable("jdk.Compilation").withThreshold(jvm.java.time.Duration.ZERO)
        for event in ("jdk.Deoptimization", "jdk.ClassLoad", "jdk.ClassDefine"):
            recording.enable(event)
        recording.start()
        try:
            return fn(*args, **kwargs)
        finally:
            recording.stop()
            recording.dump(jvm.java.io.File(os.path.join(directory, f"{name}.jfr")).toPath())
            recording.close()

    return run
