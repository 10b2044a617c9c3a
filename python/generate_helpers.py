"""spark_gazette's option keywords, generated from the connector's declaration of its options
(`options.json`, in the connector's resources) when the package is built (setup.py):

- `spark_gazette/_declaration.py`: the keyword of each option (its name in snake_case), by side,
  and the keywords whose options take times;
- `spark_gazette/helpers.py`: `read_stream`, `read`, `write_stream` and `write`, each with a
  keyword for every option of its side and queries, typed by the option's declared type, and a
  docstring that documents each from its declaration. Spark's own options (side `spark`) get no
  keyword: the docstring names those Spark hands the helper's side, which go through `**options`.

Generated at build time rather than read at import time so that the helpers' signatures are
static source: type checkers and editors see every keyword and its type (the package ships
py.typed), and `help()` shows them. An option is declared once, in options.json; the wheel
carries what was generated from it.

    python generate_helpers.py OUT_DIR    # writes OUT_DIR/_declaration.py and OUT_DIR/helpers.py
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

DECLARATION = (
    Path(__file__).resolve().parent.parent
    / "connector-scala/src/main/resources/io/sparkgazette/spark/options/options.json"
)

# A declared type's annotation (names that helpers.py imports from spark_gazette.options).
ANNOTATIONS = {
    "string": "str",
    "boolean": "bool",
    "integer": "int",
    "duration": "Duration",
    "offsets": "Offsets",
    "timestamp": "Timestamp",
    "timestamps": "Mapping[str, Timestamp]",
    "journals": "str | Sequence[str]",
}

WIDTH = 100


def keyword(option: str) -> str:
    """An option's keyword: its name in snake_case."""
    return re.sub("([A-Z])", r"_\1", option).lower()


def load(path: Path = DECLARATION) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def tables(declared: list[dict]) -> dict[str, dict[str, str]]:
    """Keyword -> option name of each side; the connection's options belong to both sides."""

    def of(side: str) -> dict[str, str]:
        return {keyword(o["name"]): o["name"] for o in declared if o["side"] == side}

    connection = of("connection")
    return {"CONNECTION": connection, "SOURCE": {**of("source"), **connection}, "SINK": {**of("sink"), **connection}}


def declaration_module(declared: list[dict]) -> str:
    out = [
        '"""Generated from options.json by generate_helpers.py when the package was built: do not edit.',
        "",
        "Each side's option keywords and the option each stands for; the keywords that take times.",
        '"""',
        "",
    ]
    for name, table in tables(declared).items():
        out.append(f"{name} = {{")
        out += [f"    {k!r}: {v!r}," for k, v in table.items()]
        out.append("}")
    times = sorted({keyword(o["name"]) for o in declared if o["type"] in ("timestamp", "timestamps")})
    out.append("TIMES = frozenset({")
    out += [f"    {k!r}," for k in times]
    out.append("})")
    return "\n".join(out) + "\n"


class Helper:
    """One helper: its name, the side and queries whose options it takes, its first parameter,
    what it adds besides options, and its docstring but the options' part."""

    def __init__(self, name, side, mode, first, returns, extra, intro, first_doc, extra_doc, tail, body):
        self.name, self.side, self.mode, self.first, self.returns = name, side, mode, first, returns
        self.extra, self.intro, self.tail, self.body = extra, intro, tail, body
        self.first_doc, self.extra_doc = first_doc, extra_doc


READ_EXTRA = [("schema", "str | StructType | None = None"), ("parse_options", "Mapping[str, object] | None = None")]
READ_EXTRA_DOC = """\
schema : str or StructType, optional
    Each row parsed into this schema's fields, in the scan, with the connector's columns in
    the struct `_gazette`. Protobuf messages are typed by `protobuf_message` of
    `protobuf_descriptor_file` (a descriptor set the driver reads) instead.
parse_options : mapping, optional
    Spark's parsing options by Spark's names (`{"timestampFormat": "dd/MM/yyyy HH:mm"}`)."""
SINK_DF_DOC = """\
df : DataFrame
    Rows with a `value` column (string or binary), optionally `journal` and `key`; without
    `value`, each row is written as a JSON object of all its columns."""
OPTIONS_DOC = """\
**options
    Any other option by the connector's name (`{example}`), or a keyword's."""

HELPERS = [
    Helper(
        "read_stream",
        "source",
        "stream",
        ("spark", "SparkSession"),
        "DataFrame",
        READ_EXTRA,
        """\
A streaming DataFrame of the journals' messages, one row per message.

Its columns are `journal, begin, end, value, uuid, producer, clock, publishTime` (and
`labels` with `include_labels`). Read committed (the default), every acknowledged message
appears exactly once; rolled-back and duplicate ones never.""",
        "spark : SparkSession",
        READ_EXTRA_DOC + "\n" + OPTIONS_DOC.format(example="maxBytesPerTrigger=64 << 20"),
        """\
Returns
-------
DataFrame

Notes
-----
In real-time mode (`.trigger(realTime="1 minute")` on the writer, pyspark 4.2 and newer),
`real_time_partitions` tasks read the journals, each holding a task slot for the whole batch;
see `spark_gazette.real_time`.

Examples
--------
>>> events = read_stream(spark, broker="http://127.0.0.1:8080", selector="prefix=events/",
...                      starting_offsets="earliest", max_bytes_per_trigger=64 << 20)  # doctest: +SKIP""",
        'return _streams.load(spark, _streams.given(locals(), "spark", "schema", "parse_options"), '
        "options, schema, parse_options, streaming=True)",
    ),
    Helper(
        "read",
        "source",
        "batch",
        ("spark", "SparkSession"),
        "DataFrame",
        READ_EXTRA,
        """\
A batch DataFrame of the journals' messages, with the columns of `read_stream`.

It holds what lies between `starting_offsets` (default "earliest") and `ending_offsets`
(default "latest"), or between the first messages published at or after `starting_timestamp`
and `ending_timestamp`.""",
        "spark : SparkSession",
        READ_EXTRA_DOC + "\n" + OPTIONS_DOC.format(example="bytesPerPartition=64 << 20"),
        """\
Returns
-------
DataFrame

Examples
--------
>>> from datetime import datetime, timezone
>>> today = read(spark, broker="http://127.0.0.1:8080", selector="prefix=events/",
...              starting_timestamp=datetime(2026, 1, 1, tzinfo=timezone.utc))  # doctest: +SKIP""",
        'return _streams.load(spark, _streams.given(locals(), "spark", "schema", "parse_options"), '
        "options, schema, parse_options, streaming=False)",
    ),
    Helper(
        "write_stream",
        "sink",
        "stream",
        ("df", "DataFrame"),
        "DataStreamWriter",
        [],
        """\
A DataStreamWriter that appends the streaming DataFrame `df` to journals, exactly once.

Rows go to `journal`, or to the journals of `selector` (mapped by their `key` column, or
named by their own `journal` column). Exactly-once streams need `checkpoint_location`
(Spark does not show the session-wide spark.sql.streaming.checkpointLocation to sinks). On a
classic session the sink checks the options now, without contacting a broker; under Spark
Connect it checks them when the query starts. Call `.start()` on the result.

In real-time mode (`.outputMode("update").trigger(realTime="1 minute")`, after
`configure_real_time(spark, per_query=True)`), rows that carry their input's `origin` column
(`spark_gazette.origin`) are written exactly once, each visible as soon as it is written. The
writer also gets Spark's option `asyncProgressTrackingEnabled=false` (unless given), which Spark
reads to run the query without the asynchronous progress tracking Spark 4.3 gives real-time
queries by default and allows its own sinks only; elsewhere it is Spark's default.""",
        SINK_DF_DOC,
        OPTIONS_DOC.format(example="flushBytes=1 << 20"),
        """\
Returns
-------
DataStreamWriter

Examples
--------
>>> write_stream(rollups, broker=b, selector="prefix=rollups/",
...              checkpoint_location="/ckpt").start()  # doctest: +SKIP
>>> copies = events.select(origin(events), to_json(struct("user", "amount")).alias("value"))  # doctest: +SKIP
>>> (write_stream(copies, broker=b, journal="copies/all", checkpoint_location="/ckpt")
...     .outputMode("update").trigger(realTime="1 minute").start())  # doctest: +SKIP""",
        'return _streams.stream_writer(df, _streams.given(locals(), "df"), options)',
    ),
    Helper(
        "write",
        "sink",
        "batch",
        ("df", "DataFrame"),
        "None",
        [("mode", 'str = "append"')],
        """\
Append the batch DataFrame `df` to journals, exactly once.

Its messages become visible when the job commits, one ACK per journal, appended journal by
journal; tasks' large runs are staged and appended after the ACKs, one append each (without
`batch_id`, under `staging_location`, else `checkpoint_location`, else where docs/sink.md
says). Journals are not committed together: a job whose commit fails part-way can leave some
of the rows visible and the others not. With `batch_id` (and `checkpoint_location`) the job
is recorded under that id first, and running it again with the same id, after a failure or
not, completes it without writing any row twice. Without `batch_id` every call is a new write.""",
        SINK_DF_DOC,
        """\
mode : str, default "append"
    The save mode; journals are append-only, and the connector refuses any other
    (GAZETTE_UNSUPPORTED_OUTPUT_MODE).
"""
        + OPTIONS_DOC.format(example="flushBytes=1 << 20"),
        """\
Examples
--------
>>> write(daily, broker="http://127.0.0.1:8080", journal="reports/daily",
...       checkpoint_location="/ckpt/reports", batch_id="day-2026-01-01")  # doctest: +SKIP""",
        '_streams.save_batch(df, _streams.given(locals(), "df", "mode"), options, mode)',
    ),
]

OPTIONS_INTRO = """\
Each option keyword below is the connector's option of the same name in camelCase
(`docs/options.md`); unset, it takes the session's `spark.datasource.gazette.<option>`, else
its default. Python values are converted to the option's string (bools, aware datetimes,
timedeltas, dicts, lists); the connector checks every value, and its error names the option."""


def _option_doc(option: dict) -> str:
    annotation = ANNOTATIONS[option["type"]].replace(" | ", " or ")
    text = f"{option['doc']} Default: {option['default']}."
    wrapped = textwrap.fill(
        text, WIDTH - 8, initial_indent="    ", subsequent_indent="    ", break_long_words=False, break_on_hyphens=False
    )
    return f"{keyword(option['name'])} : {annotation}, optional\n{wrapped}"


def _spark_options_doc(h: Helper, declared: list[dict]) -> str:
    """What of Spark's own options Spark hands this helper's side, for `**options`' entry."""
    names = [o["name"] for o in declared if o["side"] == "spark" and h.side in o["givenTo"] and h.mode in o["modes"]]
    if not names:
        return ""
    text = "Spark's own options go through too, by Spark's name: " + ", ".join(f"`{n}`" for n in names) + "."
    wrapped = textwrap.fill(
        text, WIDTH - 8, initial_indent="    ", subsequent_indent="    ", break_long_words=False, break_on_hyphens=False
    )
    return "\n" + wrapped


def _helper(h: Helper, declared: list[dict]) -> str:
    options = [o for o in declared if o["side"] in (h.side, "connection") and h.mode in o["modes"]]
    broker = next(o for o in options if o["name"] == "broker")
    rest = [o for o in options if o is not broker]
    params = [f"    {h.first[0]}: {h.first[1]},", "    broker: str | None = None,", "    *,"]
    params += [f"    {keyword(o['name'])}: {ANNOTATIONS[o['type']]} | None = None," for o in rest]
    params += [f"    {name}: {annotation}," for name, annotation in h.extra]
    params.append("    **options: object,")
    parameters = [h.first_doc, _option_doc(broker), *(_option_doc(o) for o in rest)]
    parameters.append(h.extra_doc + _spark_options_doc(h, declared))
    sections = [h.intro, OPTIONS_INTRO, "Parameters\n----------\n" + "\n".join(parameters), h.tail]
    doc = textwrap.indent("\n\n".join(sections), "    ")
    doc = "\n".join(line.rstrip() for line in doc.split("\n"))
    return (
        f"def {h.name}(\n" + "\n".join(params) + f'\n) -> {h.returns}:\n    """{doc.lstrip()}\n    """\n    {h.body}\n'
    )


def helpers_module(declared: list[dict]) -> str:
    head = '''"""Reading and writing journals: `read_stream`, `read`, `write_stream` and `write`.

Generated from options.json by generate_helpers.py when the package was built: do not edit.
Each helper takes a keyword for every option of its side and queries (its name in snake_case),
keyword-only past `broker`; any option also goes through `**options` by the connector's name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from spark_gazette import streams as _streams
from spark_gazette.options import Duration, Offsets, Timestamp

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter
    from pyspark.sql.types import StructType

__all__ = ["read", "read_stream", "write", "write_stream"]
'''
    return head + "".join("\n\n" + _helper(h, declared) for h in HELPERS)


def generate(out: Path, declaration: Path = DECLARATION) -> list[Path]:
    declared = load(declaration)
    unknown = {o["type"] for o in declared} - ANNOTATIONS.keys()
    if unknown:
        raise SystemExit(f"{declaration}: types {sorted(unknown)} have no Python annotation in {__file__}")
    written = []
    for name, text in (("_declaration.py", declaration_module(declared)), ("helpers.py", helpers_module(declared))):
        (out / name).write_text(text, encoding="utf-8")
        written.append(out / name)
    return written


if __name__ == "__main__":
    for path in generate(Path(sys.argv[1])):
        print(path)
