"""Journal specs in gazctl's YAML form, for tests, the demo and benchmarks."""

NDJSON = "application/x-ndjson"


def journal_specs(prefix: str, children, content_type: str = NDJSON, labels: dict | None = None,
                  length: int = 1 << 20, codec: str = "SNAPPY", replication: int = 1, refresh: str = "1m0s") -> str:
    """A tree of journals under `prefix` (which ends in "/"), sharing `labels` and fragment
    settings (`refresh`: how often brokers list the fragment store): `children` names them, as a list, or as a dict of name -> content type."""
    per_child = children if isinstance(children, dict) else dict.fromkeys(children, content_type)
    lines = [f"name: {prefix}", f"replication: {replication}"]
    if labels:
        lines += ["labels:"] + [f"  - name: {k}\n    value: {v}" for k, v in labels.items()]
    lines += ["fragment:", f"  length: {length}", f"  compression_codec: {codec}", '  stores: ["file:///"]',
              f"  refresh_interval: {refresh}", "children:"]
    for name, ct in per_child.items():
        lines += [f"  - name: {prefix}{name}", "    labels:", f"      - name: content-type\n        value: {ct}"]
    return "\n".join(lines) + "\n"
