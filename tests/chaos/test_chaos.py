"""A short run of tests/chaos/chaos.py (`make chaos` runs the long one): a gazette -> Spark ->
gazette pipeline on a standalone cluster and three brokers, the driver, an executor and a broker
each SIGKILLed twice under live traffic, and every committed input message in the output exactly
once, as Gazette's ReadCommittedIter sees both; then the same in Spark's real-time mode
(`make chaos-real-time` runs the long one)."""

import os
import random
import sys
from pathlib import Path

from conftest import assembly_jar, requires_local_binaries

sys.path.insert(0, str(Path(__file__).parent))
import chaos  # noqa: E402

pytestmark = requires_local_binaries


def test_the_pipeline_is_exactly_once_across_kills_of_drivers_executors_and_brokers():
    assembly_jar()  # fails with advice when the jar is missing
    seed = int(os.environ.get("CHAOS_SEED") or random.randrange(1 << 31))
    summary = chaos.run(cycles=6, seed=seed, out=print)
    print(summary)
    assert summary.ok, str(summary)
    assert all(summary.kills[k] >= 1 for k in chaos.KINDS), str(summary)


def test_the_real_time_pipeline_is_exactly_once_across_kills_of_drivers_executors_and_brokers():
    """The same pipeline in Spark's real-time mode, each kind killed once: rows carry their input
    message (`origin`), a batch cut short runs again from the last committed offsets, and the
    copies it writes again are dropped by readers; the drain runs in real-time mode too."""
    assembly_jar()
    seed = int(os.environ.get("CHAOS_SEED") or random.randrange(1 << 31))
    summary = chaos.run(cycles=3, seed=seed, out=print, real_time=True)
    print(summary)
    assert summary.ok, str(summary)
    assert summary.lost == summary.duplicated == 0, str(summary)
    assert all(summary.kills[k] >= 1 for k in chaos.KINDS), str(summary)
