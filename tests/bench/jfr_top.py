"""Where a Flight Recorder profile's CPU samples went: the top frames of jdk.ExecutionSample events,
as percentages, by the method that was running ("self") and by methods anywhere on the stack
("total"), optionally only for threads whose name contains --thread; and by layer: each sample
goes to the layer of the frame nearest the leaf that belongs to one (a copy called by the framing
is the framing's), and by kind of thread (the task's, gRPC's and netty's, the rest).

    python tests/bench/jfr_top.py profile.jfr [--top 25] [--thread "Executor task"]
"""

import argparse
import collections
import json
import subprocess

# Layers by the prefixes of their classes, the first match nearest the leaf wins.
LAYERS = [
    (
        "framing",
        (
            "io.sparkgazette.message.Json",
            "io.sparkgazette.message.ByteScan",
            "io.sparkgazette.message.Csv",
            "io.sparkgazette.message.Fixed",
            "io.sparkgazette.message.ProtoWire",
            "io.sparkgazette.message.Uuid",
            "io.sparkgazette.message.MessageIterator",
            "io.sparkgazette.message.Framing",
        ),
    ),
    ("sequencer", ("io.sparkgazette.message.Sequencer", "io.sparkgazette.message.ReadCommitted")),
    ("rows (ours)", ("io.sparkgazette.spark.source.rows.MessageToRow", "io.sparkgazette.spark.protobuf")),
    (
        "client (ours, gRPC, netty, protobuf)",
        ("io.sparkgazette.client", "io.grpc", "io.netty", "com.google.protobuf", "scalapb"),
    ),
    ("source reader (ours)", ("io.sparkgazette.spark",)),
    ("Spark (generated code, operators, tasks)", ("org.apache.spark", "GeneratedClass")),
]


def layer(stack: list[str]) -> str:
    for frame in stack:
        for name, prefixes in LAYERS:
            if frame.startswith(prefixes):
                return name
    return "other (JVM, JDK)"


def thread_kind(name: str) -> str:
    if name.startswith("Executor task"):  # "... launch worker", renamed "... idle worker" once done
        return "task"
    if "grpc" in name.lower() or "netty" in name.lower() or "elg" in name.lower():
        return "gRPC/netty"
    return "other"


def samples(path: str, thread: str | None):
    out = subprocess.run(
        # `jfr print` keeps 5 frames of a stack unless told: too few for "total" and the layers.
        ["jfr", "print", "--json", "--stack-depth", "64", "--events", "jdk.ExecutionSample", path],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for event in json.loads(out)["recording"]["events"]:
        values = event["values"]
        name = (values.get("sampledThread") or {}).get("javaName") or ""
        if thread and thread not in name:
            continue
        frames = (values.get("stackTrace") or {}).get("frames") or []
        yield name, [f"{f['method']['type']['name'].replace('/', '.')}.{f['method']['name']}" for f in frames]


def main() -> None:
    parser = argparse.ArgumentParser(description="top frames of a JFR profile")
    parser.add_argument("jfr")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--thread", default=None, help="only threads whose name contains this")
    args = parser.parse_args()
    own, anywhere, layers, n = collections.Counter(), collections.Counter(), collections.Counter(), 0
    for thread, stack in samples(args.jfr, args.thread):
        if not stack:
            continue
        n += 1
        own[stack[0]] += 1
        layers[(thread_kind(thread), layer(stack))] += 1
        for frame in set(stack):
            anywhere[frame] += 1
    print(f"{n} samples")
    print("self:")
    for frame, k in own.most_common(args.top):
        print(f"  {100 * k / n:5.1f}%  {frame}")
    print("total:")
    for frame, k in anywhere.most_common(args.top):
        print(f"  {100 * k / n:5.1f}%  {frame}")
    print("by thread and layer:")
    for (kind, name), k in layers.most_common():
        print(f"  {100 * k / n:5.1f}%  {kind:<10} {name}")


if __name__ == "__main__":
    main()
