"""One journal-spec builder for every suite (tests/harness/specs.py): its YAML and its tree are the
same specs, spark_gazette.admin.flatten_specs reads them as gazctl does, and the journals that
docker-compose applies from tests/specs/examples.yaml are the ones it builds."""

import doctest

import yaml

import specs
from conftest import SPECS
from spark_gazette.admin import flatten_specs
from specs import NDJSON, journal_specs, journal_tree

FRAGMENT = {"length": 1 << 20, "compression_codec": "SNAPPY", "stores": ["file:///"], "refresh_interval": "1m0s"}


def test_the_yaml_text_and_the_tree_are_the_same_specs():
    settings = {
        "labels": {"app": "x", "shard": 7},
        "length": 1024,
        "codec": "NONE",
        "replication": 2,
        "refresh": "1s",
        "child_labels": {"b": {"team": "data"}},
    }
    tree = journal_tree("t/", {"a": NDJSON, "b": "application/x-protobuf-fixed"}, **settings)
    assert yaml.safe_load(journal_specs("t/", {"a": NDJSON, "b": "application/x-protobuf-fixed"}, **settings)) == tree


def test_the_journals_carry_one_set_of_defaults():
    flat = flatten_specs(journal_tree("t/", ["a", "b"], labels={"app": "x"}, child_labels={"b": {"team": "data"}}))
    assert flat == [
        {"name": "t/a", "replication": 1, "labels": [["app", "x"], ["content-type", NDJSON]], "fragment": FRAGMENT},
        {
            "name": "t/b",
            "replication": 1,
            "labels": [["app", "x"], ["content-type", NDJSON], ["team", "data"]],
            "fragment": FRAGMENT,
        },
    ]


def test_label_values_stay_strings_in_yaml():
    tree = yaml.safe_load(journal_specs("t/", ["a"], labels={"n": 7, "flag": "true"}))
    assert tree["labels"] == [{"name": "n", "value": "7"}, {"name": "flag", "value": "true"}]


def test_examples_yaml_holds_the_journals_the_builder_makes():
    built = journal_tree("examples/", ["events-part-000", "events-part-001"], length=4 << 20)
    assert flatten_specs(yaml.safe_load(SPECS.read_text())) == flatten_specs(built)


def test_the_docstring_examples_of_specs_run():
    assert doctest.testmod(specs).failed == 0
