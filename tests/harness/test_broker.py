"""The broker every Python suite uses answers the project's journal specs, wherever it runs."""

import json
import urllib.request
import uuid


def test_examples_journals_round_trip_through_the_http_gateway(gazette_broker):
    journal = f"{gazette_broker}/examples/events-part-000"
    marker = uuid.uuid4().hex
    lines = b"".join(json.dumps({"marker": marker, "n": i}).encode() + b"\n" for i in range(100))
    req = urllib.request.Request(journal, data=lines, method="PUT")
    with urllib.request.urlopen(req, timeout=30) as r:
        begin, end = int(r.headers["X-Commit-Begin"]), int(r.headers["X-Commit-End"])
    assert end - begin == len(lines)
    with urllib.request.urlopen(f"{journal}?offset={begin}", timeout=30) as r:
        got = r.read(len(lines))
    assert got == lines
