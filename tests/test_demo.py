"""`make demo`'s job in its short mode: its summary must show every committed event counted once
and no rolled-back or duplicate event counted."""

import re
import subprocess
import sys

from conftest import ROOT, requires_local_binaries

pytestmark = requires_local_binaries


def test_the_demo_counts_every_committed_event_once():
    out = subprocess.run(
        [sys.executable, str(ROOT / "python" / "examples" / "rollups.py"), "--short"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    text = out.stdout
    assert re.search(r"^  batch +\d+: +\d+ events in, +[\d,]+ bytes behind head$", text, re.M)
    committed, counted = map(int, re.search(r"^total +(\d+) +(\d+) +\d+ +\d+$", text, re.M).groups())
    published = re.search(r"published: (\d+) committed, (\d+) rolled back, (\d+) duplicate re-sends", text)
    assert committed == counted == int(published.group(1)) > 0
    assert int(published.group(2)) > 0 and int(published.group(3)) > 0
    assert "exactly-once: OK" in text
    assert "stopped: stream, Spark, cluster" in text
    # Spark's start-up notices, the JDK's and library warnings are not the user's business: none on stderr.
    noise = [
        line
        for line in out.stderr.splitlines()
        if re.search(r"\bWARN\b|^WARNING:|log4j profile|Setting default log level|Warning:|FutureWarning", line)
    ]
    assert noise == [], "\n".join(noise[:20])


def test_the_demo_in_real_time_mode_writes_each_committed_purchase_once_and_prints_its_latency():
    out = subprocess.run(
        [sys.executable, str(ROOT / "python" / "examples" / "rollups.py"), "--short", "--real-time"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    text = out.stdout
    assert "real-time mode" in text
    assert re.search(r"^  batch +\d+: +\d+ events in, +\d+ receipts read committed so far$", text, re.M)
    latency = r"^latency, append -> receipt read committed by Gazette's reader: p50 (\d+) ms, p99 (\d+) ms"
    assert re.search(latency, text, re.M), text
    committed, counted = map(int, re.search(r"^total +(\d+) +(\d+) +\d+ +\d+$", text, re.M).groups())
    published = re.search(r"published: (\d+) committed, (\d+) rolled back, (\d+) duplicate re-sends", text)
    assert committed == counted == int(published.group(1)) > 0
    assert "receipts written twice: 0" in text
    assert "exactly-once: OK" in text
    assert "stopped: stream, Spark, cluster" in text
    # No notices on stderr either, nor the errors Spark logs for the batch a stop cuts short.
    noise = [line for line in out.stderr.splitlines() if re.search(r"\bWARN\b|\bERROR\b|^WARNING:|Warning:", line)]
    assert noise == [], "\n".join(noise[:20])
