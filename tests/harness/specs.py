"""Journal specs for the tests, the demo and the benchmarks: one builder with one set of defaults.

`journal_tree` makes gazctl's hierarchical spec as a dict, which `spark_gazette.admin.apply_specs`
takes as it is; `journal_specs` is the same tree as YAML text, for `LocalCluster.apply` (gazctl)
and `apply_specs`. tests/specs/examples.yaml, which docker-compose applies, is pinned to it by
tests/harness/test_specs.py.

    >>> journal_tree("events/", ["a"])["children"]
    [{'name': 'events/a', 'labels': [{'name': 'content-type', 'value': 'application/x-ndjson'}]}]
"""

from __future__ import annotations

import yaml

NDJSON = "application/x-ndjson"


def journal_tree(
    prefix: str,
    children: list[str] | dict[str, str],
    content_type: str = NDJSON,
    labels: dict[str, str] | None = None,
    length: int = 1 << 20,
    codec: str = "SNAPPY",
    replication: int = 1,
    refresh: str = "1m0s",
    child_labels: dict[str, dict[str, str]] | None = None,
    store: str = "file:///",
    flush_interval: str | None = None,
    path_postfix_template: str | None = None,
) -> dict:
    """Journals under `prefix` (which ends in "/") sharing `labels` and the fragment settings:
    fragments of about `length` bytes compressed with `codec` (NONE, GZIP, SNAPPY, ZSTANDARD,
    GZIP_OFFLOAD_DECOMPRESSION), persisted to `store` (`LocalCluster.store_url()`: `file:///`
    or the cluster's S3 server) under the journal's name and the expanded `path_postfix_template`
    (e.g. `utc_date={{.Spool.FirstAppendTime.Format "2006-01-02"}}`), also every `flush_interval`
    (a minute at least; by default only at `length`), and listed from it every `refresh`.
    `children` names the journals, as a list, or as a dict of name -> content type;
    `child_labels` adds labels to some of them."""
    per_child = children if isinstance(children, dict) else dict.fromkeys(children, content_type)
    extra = child_labels or {}
    tree: dict = {"name": prefix, "replication": replication}
    if labels:
        tree["labels"] = _labels(labels)
    tree["fragment"] = {
        "length": length,
        "compression_codec": codec,
        "stores": [store],
        "refresh_interval": refresh,
    }
    if flush_interval:
        tree["fragment"]["flush_interval"] = flush_interval
    if path_postfix_template:
        tree["fragment"]["path_postfix_template"] = path_postfix_template
    tree["children"] = [
        {"name": prefix + name, "labels": _labels({"content-type": ct, **extra.get(name, {})})}
        for name, ct in per_child.items()
    ]
    return tree


def journal_specs(prefix: str, children: list[str] | dict[str, str], **settings) -> str:
    """`journal_tree(prefix, children, **settings)` in gazctl's YAML form."""
    return yaml.safe_dump(journal_tree(prefix, children, **settings), sort_keys=False)


def _labels(labels: dict[str, str]) -> list[dict[str, str]]:
    # Label values are strings: a number stays one in YAML only quoted, which safe_dump does for str.
    return [{"name": k, "value": str(v)} for k, v in labels.items()]
