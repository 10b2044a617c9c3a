"""Where a Flight Recorder profile's CPU samples went: the top frames of jdk.ExecutionSample events,
as percentages, by the method that was running ("self") and by methods anywhere on the stack
("total"), optionally only for threads whose name contains --thread.

    python tests/bench/jfr_top.py profile.jfr [--top 25] [--thread "Executor task launch"]
"""

import argparse
import collections
import json
import subprocess


def samples(path: str, thread: str | None):
    out = subprocess.run(["jfr", "print", "--json", "--events", "jdk.ExecutionSample", path],
                         capture_output=True, text=True, check=True).stdout
    for event in json.loads(out)["recording"]["events"]:
        values = event["values"]
        name = (values.get("sampledThread") or {}).get("javaName") or ""
        if thread and thread not in name:
            continue
        frames = (values.get("stackTrace") or {}).get("frames") or []
        yield [f"{f['method']['type']['name']}.{f['method']['name']}" for f in frames]


def main() -> None:
    parser = argparse.ArgumentParser(description="top frames of a JFR profile")
    parser.add_argument("jfr")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--thread", default=None, help="only threads whose name contains this")
    args = parser.parse_args()
    own, anywhere, n = collections.Counter(), collections.Counter(), 0
    for stack in samples(args.jfr, args.thread):
        if not stack:
            continue
        n += 1
        own[stack[0]] += 1
        for frame in set(stack):
            anywhere[frame] += 1
    print(f"{n} samples")
    print("self:")
    for frame, k in own.most_common(args.top):
        print(f"  {100 * k / n:5.1f}%  {frame}")
    print("total:")
    for frame, k in anywhere.most_common(args.top):
        print(f"  {100 * k / n:5.1f}%  {frame}")


if __name__ == "__main__":
    main()
