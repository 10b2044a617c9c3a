"""Timing and profiling for the benchmark scripts."""

import os
import time


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

    def run():
        recording = jvm.jdk.jfr.Recording(jvm.jdk.jfr.Configuration.getConfiguration("profile"))
        # The profile's 10 ms period leaves a few seconds' read with too few samples.
        recording.enable("jdk.ExecutionSample").withPeriod(jvm.java.time.Duration.ofMillis(1))
        recording.start()
        try:
            return fn()
        finally:
            recording.stop()
            recording.dump(jvm.java.io.File(os.path.join(directory, f"{name}.jfr")).toPath())
            recording.close()

    return run
