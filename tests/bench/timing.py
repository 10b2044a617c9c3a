"""Timing for the benchmark scripts."""

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
