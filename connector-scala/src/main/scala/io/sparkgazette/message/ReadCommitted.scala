package io.sparkgazette.message

/** What a reader does with a malformed message: fail, or skip it and go on. */
sealed trait OnMalformed {

  /** Called for each malformed message met; throws to fail the read. */
  def apply(m: MalformedMessage): Unit
}

object OnMalformed {

  /** Fails the read with a [[MalformedMessageException]] naming the journal and offset. */
  case object Fail extends OnMalformed {
    override def apply(m: MalformedMessage): Unit = throw new MalformedMessageException(m)
  }

  /** Skips malformed messages, counting them and their bytes. */
  final class Skip extends OnMalformed {
    @volatile var messages = 0L
    @volatile var bytes = 0L
    override def apply(m: MalformedMessage): Unit = { messages += 1; bytes += m.end - m.begin }
  }

  /** What a replay does with the malformed messages it re-reads: as the first read did, without
    * counting them again.
    */
  def forReplay(onMalformed: OnMalformed): OnMalformed = onMalformed match {
    case _: Skip => new Skip
    case other => other
  }
}

/** Every well-formed message of `messages`, as read: Gazette's ReadUncommittedIter. */
object ReadUncommitted {
  def apply(messages: Iterator[Either[MalformedMessage, Envelope[RawMessage]]], onMalformed: OnMalformed)
      : Iterator[Envelope[RawMessage]] =
    messages.flatMap {
      case Left(m) => onMalformed(m); None
      case Right(env) => Some(env)
    }
}

/** The committed messages of one journal read uncommitted, each exactly once, in the order
  * Gazette's ReadCommittedIter yields them, acknowledgements left out.
  *
  * @param replay reads `[begin, end)` of the journal again, uncommitted, when a transaction
  *               began before what the sequencer's ring still holds
  */
final class ReadCommitted(
    messages: Iterator[Either[MalformedMessage, Envelope[RawMessage]]],
    sequencer: Sequencer[RawMessage],
    replay: (String, Long, Long) => Iterator[Either[MalformedMessage, Envelope[RawMessage]]],
    onMalformed: OnMalformed
) extends Iterator[Envelope[RawMessage]] {

  private val uncommitted = ReadUncommitted(messages, onMalformed)
  private var ready: Envelope[RawMessage] = _

  override def hasNext: Boolean = ready != null || advance()

  override def next(): Envelope[RawMessage] = {
    if (!hasNext) throw new NoSuchElementException("no more committed messages")
    val r = ready
    ready = null
    r
  }

  private def advance(): Boolean = {
    while (ready == null) {
      sequencer.step() match {
        case Some(env) => if (env.clock == 0 || env.flags != Flags.AckTxn) ready = env
        case None =>
          if (!uncommitted.hasNext) return false
          if (sequencer.queue(uncommitted.next()) == QueueOutcome.AckCommitReplay) {
            val (journal, begin, end) = sequencer.replayRange
            sequencer.startReplay(ReadUncommitted(replay(journal, begin, end), OnMalformed.forReplay(onMalformed)))
          }
      }
    }
    true
  }
}
