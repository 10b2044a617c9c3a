package io.sparkgazette.spark
package source
package reading

import io.sparkgazette.message._
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.source.offsets.JournalRange
import io.sparkgazette.spark.source.rows.{MessageToRow, TypedRows}
import org.apache.spark.sql.catalyst.InternalRow

/** What reading one journal's bytes takes, the same for a micro-batch's range and a real-time
  * task's tail: its framing, its messages, a Sequencer over them, and the rows they make. Both
  * readers hold one, so that a message becomes the same row, malformed or not, in either mode.
  *
  * `rows` false (a first pass, which only finds producers' states) parses no payload and keeps no
  * message's bytes.
  */
private[source] final class JournalDecoder(range: JournalRange, config: ReaderConfig, rows: Boolean = true) {
  import JournalDecoder._

  val journal: String = range.journal
  private val options = config.options
  private val framing = config.framing(range.contentType).fold(
    problem => throw GazetteErrors.unsupportedFraming(journal, problem), identity)

  /** The connector's columns of a message (the whole row, without a schema). */
  val toRow: MessageToRow.Converter =
    new MessageToRow.Converter(journal, if (config.readsLabels) Some(range.labels) else None, config.columns)

  val onMalformed: OnMalformed = if (options.failOnMalformed) OnMalformed.Fail else new OnMalformed.Skip

  // With a schema, each message's fields, parsed as it is emitted; its connector's columns by `toRow`.
  private val typedRows = config.shape.typed.filter(_ => rows).map { t =>
    val parse = t.parser(range.contentType).fold(problem => throw GazetteErrors.unsupportedFraming(journal, problem),
      identity)
    new TypedRows(parse, if (config.columns.nonEmpty) Some(toRow) else None)
  }

  /** Whether rows are parsed from payloads (a schema), rather than built of the connector's columns. */
  def typed: Boolean = typedRows.isDefined

  /** The typed row of `env`; null where its payload does not parse, which is then malformed: failed
    * on or skipped as the framing's malformed messages are.
    */
  def typedRow(env: Envelope[RawMessage]): InternalRow =
    typedRows.get(env) match {
      case Right(r) => r
      case Left(reason) => onMalformed(MalformedMessage(journal, env.begin, env.end, reason)); null
    }

  /** Messages skipped as malformed (failOnMalformed=false). */
  def malformedSkipped: Long = onMalformed match { case s: OnMalformed.Skip => s.messages; case _ => 0L }

  // Typed rows with a corrupt-record column (PERMISSIVE) take what the framing finds malformed for a
  // message without a UUID, for the parser to make a corrupt record of.
  private val permissive = config.shape.typed.exists(_.schema.permissive)

  /** The messages of `bytes`. `validate` false takes every line for well-formed: only a first pass
    * whose read fails on a malformed message anyway may skip the check (see JournalRangeReader).
    * `writtenUntil`: the driver saw `bytes` written up to there (see [[MessageIterator]]).
    */
  def messages(bytes: Iterator[JournalBytes], validate: Boolean = true, writtenUntil: Long = Long.MinValue)
      : MessageIterator =
    new MessageIterator(
      journal,
      framing,
      bytes,
      holdTail = true,
      maxMessageBytes = options.maxMessageBytes,
      payloads = rows,
      validate = validate || permissive,
      malformedAsMessages = permissive,
      writtenUntil = writtenUntil
    )

  /** A Sequencer of this journal from `at`, with `producers`' states, in the ring the options size. */
  def sequencer(at: Long, producers: Seq[ProducerState]): Sequencer[RawMessage] =
    new Sequencer[RawMessage](
      Map(journal -> at),
      producers,
      options.sequencerRingSize,
      options.sequencerRingBytes,
      m => m.bytes.length + (if (m.members == null) 0 else 4 * m.members.length) + EnvelopeOverhead
    )
}

private object JournalDecoder {
  // What a held message costs beyond its bytes: the envelope, its UUID and the array header.
  private val EnvelopeOverhead = 128
}
