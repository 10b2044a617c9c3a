"""The README's Quick start, made real (`make quickstart`): on a running local cluster
(`cluster.py up`), the journals `events/part-000..001` and `rollups/part-000..001`, and sample
purchase events in `events/` (`{"user", "amount"}`, committed under Gazette message UUIDs, as a
Gazette Publisher writes them), then what to run and the totals the Quick start should write.

    python tests/harness/quickstart.py [--dir .cluster] [--events 1000] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

from cluster import ROOT, _cluster_from
from messages import gazette_uuid
from specs import journal_specs

EVENTS = [f"events/part-{i:03d}" for i in range(2)]
ROLLUPS = [f"rollups/part-{i:03d}" for i in range(2)]
USERS = ["ada", "barbara", "edsger", "grace", "ken", "radia"]

# Gazette clocks count 100 ns intervals since the UUID epoch (1582-10-15), as RFC 4122 v1 times do.
UUID_EPOCH_OFFSET_100NS = 0x01B21DD213814000


def events(count: int, seed: int) -> list[dict]:
    """`count` purchases of USERS with amounts 1..100, the same for the same seed."""
    rng = random.Random(seed)
    return [{"user": rng.choice(USERS), "amount": rng.randint(1, 100)} for _ in range(count)]


def totals(purchases: list[dict]) -> dict[str, int]:
    sums: Counter[str] = Counter()
    for p in purchases:
        sums[p["user"]] += p["amount"]
    return dict(sorted(sums.items()))


def publish(broker: str, purchases: list[dict]) -> None:
    """Round-robin over EVENTS, one append a journal, each event outside any transaction
    (committed on its own) under one producer and increasing clocks."""
    producer = int.from_bytes(os.urandom(6), "big") | (1 << 40)  # the multicast bit: a random producer ID
    clock = time.time_ns() // 100 + UUID_EPOCH_OFFSET_100NS
    lines: dict[str, list[str]] = {j: [] for j in EVENTS}
    for i, p in enumerate(purchases):
        clock += 1
        doc = {"_meta": {"uuid": gazette_uuid(producer, clock, 0)}, **p}
        lines[EVENTS[i % len(EVENTS)]].append(json.dumps(doc, separators=(",", ":")))
    for journal, docs in lines.items():
        body = ("\n".join(docs) + "\n").encode()
        req = urllib.request.Request(f"{broker}/{journal}", data=body, method="PUT")
        with urllib.request.urlopen(req, timeout=30) as resp:
            if resp.status // 100 != 2:
                raise RuntimeError(f"appending to {journal} through {broker} answered {resp.status}")


def prepare(cluster, count: int, seed: int) -> dict[str, int]:
    """The Quick start's journals and `count` events on `cluster`; the totals they make per user."""
    cluster.apply(journal_specs("events/", [j.removeprefix("events/") for j in EVENTS]))
    cluster.apply(journal_specs("rollups/", [j.removeprefix("rollups/") for j in ROLLUPS]))
    purchases = events(count, seed)
    publish(cluster.broker, purchases)
    return totals(purchases)


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default=str(ROOT / ".cluster"), help="the running cluster's state directory")
    p.add_argument("--events", type=int, default=1000)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    state = Path(args.dir) / "state.json"
    if not state.exists():
        sys.exit(f"no local cluster runs from {args.dir}: start one with `python tests/harness/cluster.py up`")
    cluster = _cluster_from(state)
    expected = prepare(cluster, args.events, args.seed)
    totals_line = ", ".join(f"{u} {t}" for u, t in expected.items())
    python = os.path.relpath(sys.executable, Path.cwd()) if sys.prefix != sys.base_prefix else "python"
    print(
        f"A Gazette broker listens on {cluster.broker}: journals {', '.join(EVENTS)} hold {args.events} purchase\n"
        f"events, and {', '.join(ROLLUPS)} are empty. Run the README's Quick start in `{python}`\n"
        f"(spark_gazette and its jar are installed there); the totals it writes to rollups/ should be:\n"
        f"  {totals_line}\n"
        "Stop the cluster with `make cluster-down`."
    )


if __name__ == "__main__":
    main(sys.argv[1:])
