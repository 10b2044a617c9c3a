package io.sparkgazette.spark
package options

/** `docs/options.md`: the connector's options reference (its `options.json`) as a page. */
object OptionsPage {
  private def modes(d: OptionDoc): String =
    if (d.modes == Set[OptionDoc.Mode](OptionDoc.Stream, OptionDoc.Batch)) "streams, batches"
    else if (d.modes == Set[OptionDoc.Mode](OptionDoc.Stream)) "streams"
    else "batches"

  def markdown: String = {
    def table(side: OptionDoc.Side): String =
      ("| option | type | default | in | meaning |" +: "| --- | --- | --- | --- | --- |" +:
        OptionDoc.all.filter(_.side == side).map {
          d => s"| `${d.name}` | ${d.valueType.key} | ${d.default} | ${modes(d)} | ${d.doc} |"
        }).mkString("\n")
    // Interpolated after the margin is stripped: the tables' rows begin with the margin character.
    val intro =
      """# Options
        |
        |<!-- Generated from the connector's options.json by `make options-doc`; a test fails when this page and the code differ. -->
        |
        |Options are set with `.option(name, value)` on `spark.readStream`/`spark.read` (the source) and on
        |`df.writeStream`/`df.write` (the sink), or for every query of a session as
        |`spark.datasource.gazette.<option>` (`spark.conf.set`, `--conf`); an option a query sets itself wins.
        |Names are case-insensitive. The Python helpers take the same options as snake_case keywords
        |(`startingOffsets` is `starting_offsets`), keyword-only, and any option by this page's name through
        |`**options` (`read_stream(spark, broker, journals="a", maxBytesPerTrigger=1 << 20)`); they convert Python
        |values (booleans, datetimes, dicts, lists) to these strings. Column *in* says which queries take an
        |option: streams (`readStream`, `writeStream`; Python's `read_stream`, `write_stream`), batch queries
        |(`read`, `write`), or both.
        |
        |Each side checks its own options, and an error names the option (condition `GAZETTE_INVALID_OPTION`,
        |`GAZETTE_UNKNOWN_OPTION`, `GAZETTE_MISSING_OPTION` or `GAZETTE_CONFLICTING_OPTIONS`): the source
        |where a DataFrame is loaded without a schema (`load()`), the sink where a batch write is saved
        |(`save()`). Where Spark does not yet say whether the options are read or written (a load with a
        |schema, a stream's `start()`), a name that neither side takes is refused there, and the rest when
        |the query is planned or starts running: `start()` returns, and the query stops at once with that
        |error. The Python helpers on a classic session check a query's options with its side when they
        |are given (`read_stream`, `read`, `write_stream`).
        |
        |Of Spark's own options, `path` (`save(journal)`) names the sink's journal, and those Spark reads from a
        |query's options pass through (below).""".stripMargin
    val typedIntro =
      """Given a schema (`.schema(...)`, Python's `schema=`), the source parses each message into the schema's
        |fields, with Spark's own parsers and these of their options (Python: `parse_options={...}` with these
        |names); the connector's columns move into the struct `_gazette`. See the user guide (docs/source.md).""".stripMargin
    val sparkIntro =
      """Spark reads these from what a query was given, and hands them to the connector with its own options;
        |the connector lets them through, on the side Spark reads them from, and refuses a name close to
        |one of them, suggesting it. Those marked *exact* work in this spelling only: Spark looks them up
        |as given, so `asyncprogresstrackingenabled` does nothing (the connector cannot tell: under Spark
        |Connect it may be handed names in lower case).
        |Spark reads none of a source's options: `load(path)` sets `path` (`load(a, b)`, `paths`), which
        |a source has no use for and refuses. Real-time mode takes no option of a query, only its trigger
        |and the session's `spark.sql.streaming.realTimeMode.*` settings (see the sink's user guide,
        |docs/sink.md).""".stripMargin
    val sparkTable =
      ("| option | type | default | given to | where Spark reads it |" +: "| --- | --- | --- | --- | --- |" +:
        OptionDoc.all.filter(_.side == OptionDoc.Spark).map { d =>
          val sides =
            Seq(OptionDoc.Source -> "source", OptionDoc.Sink -> "sink").collect { case (s, n) if d.givenTo(s) => n }
          s"| `${d.name}`${if (d.exactCase) " (exact)" else ""} | ${d.valueType.key} | ${d.default} | " +
            s"${sides.mkString(", ")} | ${d.doc} |"
        }).mkString("\n")
    val tls = """Files named by the TLS options are read where the clients run, the driver and every executor: on a
      |cluster, put them at the same path on every node (or distribute them with `--files`).""".stripMargin
    Seq(
      intro,
      "## Source",
      table(OptionDoc.Source),
      "## Sink",
      table(OptionDoc.Sink),
      "## Typed rows (source, with a schema)",
      typedIntro,
      table(OptionDoc.Parsing),
      "## Connection (source, sink and the admin helpers)",
      table(OptionDoc.Connection),
      tls,
      "## Spark's own options",
      sparkIntro,
      sparkTable
    ).mkString("", "\n\n", "\n")
  }
}
