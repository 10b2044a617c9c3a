"""A short run of tests/chaos/network_chaos.py (`make chaos-network` runs the long one): the
gazette -> Spark -> gazette pipeline with etcd, three brokers and Spark each in a network
namespace of its own, under partitions (Spark and brokers, a broker and etcd, a broker and its
peer) and toxiproxy's latency, bandwidth caps, resets and blackholes on Spark's links, each
shorter than the connector's timeouts: no query fails or stalls past the stated bound, and every
committed input message is in the output exactly once, as Gazette's ReadCommittedIter sees both.
CHAOS_SEED=S replays a schedule (its seed is in the failure)."""

import os
import random
import sys
from pathlib import Path

from conftest import assembly_jar, requires_local_binaries, requires_network_faults

sys.path.insert(0, str(Path(__file__).parent))
import network_chaos  # noqa: E402

pytestmark = [requires_local_binaries, requires_network_faults]


def test_the_pipeline_is_exactly_once_across_network_faults():
    assembly_jar()  # fails with advice when the jar is missing
    seed = int(os.environ.get("CHAOS_SEED") or random.randrange(1 << 31))
    cycles = int(os.environ.get("CHAOS_NETWORK_SHORT_CYCLES", 4))
    # The kinds that reach the connector's own clients, one each (a broker's partition from etcd
    # or its peer is in the long run).
    faults = ("spark-brokers", "reset", "blackhole", "latency")[:cycles]
    summary = network_chaos.run(cycles=cycles, seed=seed, out=print, faults=faults, kill_share=0, long_share=0)
    print(summary)
    assert summary.ok, f"{summary}\nreplay: CHAOS_SEED={seed}"
    assert summary.cycles == cycles, str(summary)
    assert summary.proxied > 0, "Spark's connections to the brokers bypassed toxiproxy"


def test_the_real_time_pipeline_is_exactly_once_across_network_faults():
    """The same in Spark's real-time mode: rows carry their input message (`origin`), and faults
    below the connector's timeouts fail nothing (`make chaos-network CHAOS_NETWORK_ARGS=--real-time`
    runs the long one)."""
    assembly_jar()
    seed = int(os.environ.get("CHAOS_SEED") or random.randrange(1 << 31))
    faults = ("spark-brokers", "reset", "blackhole")
    summary = network_chaos.run(
        cycles=3, seed=seed, out=print, faults=faults, kill_share=0, long_share=0, real_time=True
    )
    print(summary)
    assert summary.ok, f"{summary}\nreplay: CHAOS_SEED={seed}"
    assert summary.lost == summary.duplicated == 0, str(summary)
    assert summary.proxied > 0, "Spark's connections to the brokers bypassed toxiproxy"


def test_history_reads_are_whole_across_store_faults():
    """The fragment store faulted for Spark (or down for everyone) while a batch reads the inputs'
    recent history straight from it: each read gives exactly what Gazette's ReadUncommittedIter
    gives over the same offsets, the store's fragments coming through the brokers while it fails,
    and the pipeline beside it stays exactly once (`make chaos-network-short`; the long run has
    these among its faults)."""
    assembly_jar()
    seed = int(os.environ.get("CHAOS_SEED") or random.randrange(1 << 31))
    cycles = int(os.environ.get("CHAOS_NETWORK_SHORT_CYCLES", 3))
    summary = network_chaos.run(cycles=cycles, seed=seed, out=print, faults=("store",), kill_share=0, long_share=0)
    print(summary)
    assert summary.ok, f"{summary}\nreplay: CHAOS_SEED={seed}"
    assert summary.history_reads == cycles and summary.history_messages > 0, str(summary)
