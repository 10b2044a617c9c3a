package io.sparkgazette.spark
package source
package reading

import scala.collection.mutable

import io.sparkgazette.client.{BrokerUnavailableException, GazetteException => ClientException}
import io.sparkgazette.message.StateTransfer
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.source.offsets.{JournalRange, Piece}
import io.sparkgazette.spark.source.state.SequencerState
import org.apache.spark.sql.SparkSession

/** The producers' states at the pieces of ranges split read committed. Every piece but the last
  * of a range is first read by a cheap pass that only frames its messages and takes their UUIDs
  * and offsets, into a [[StateTransfer]]; composed in order, the transfers of the pieces before a
  * piece carry the states at the range's start (saved, or empty) to the states at the piece's
  * first message, exactly as one sequencer reading the range would hold them there. The pieces
  * are then read as a whole range is, each from its own states, at once.
  *
  * The pass runs as a Spark job while the batch is planned, its bytes cut into at least as many
  * parts as the session has cores, so that it takes a fraction of the read. What it finds depends
  * on the batch's offsets and the journal's bytes alone, so a batch planned again (after a restart)
  * reads the same states, however its bytes were cut.
  */
private[source] object PieceStates {

  /** Above this many producers and moves in a piece's transfer, its range is read by one task. */
  val MaxTransferSize: Long = 1L << 18

  /** The producers and moves all parts of one plan may bring back to the driver (a few dozen
    * bytes each): a part's share of it bounds its transfer, so that the pass's results stay far
    * below `spark.driver.maxResultSize` (1 GiB by default) however many parts it has.
    */
  val MaxPlanTransferSize: Long = 1L << 22

  /** The pass cuts a piece into parts of at least this many bytes to use every core. */
  val MinPartBytes: Long = 1L << 20

  /** Bytes of a split range the pass reads: the messages that begin in `[from, until)`, the first
    * at `resume` for the range's first part (where the state at its start says reading resumes),
    * else at the first line start at or after `from`.
    */
  final case class Part(range: JournalRange, from: Long, until: Long, resume: Option[Long],
      maxTransferSize: Long = MaxTransferSize)

  /** A part's transfer (None: larger than [[MaxTransferSize]]) and the bytes the pass read. */
  final case class Result(transfer: Option[StateTransfer], bytes: Long)

  /** Ranges and pieces to read, with what finding the pieces' states cost: ranges split, bytes the
    * pass read, and the journals whose range was left whole because a transfer outgrew
    * [[MaxTransferSize]].
    */
  final case class Planned(ranges: Seq[JournalRange], split: Int = 0, prescanned: Long = 0L,
      tooLarge: Seq[String] = Nil)

  /** Gives each piece but the first of every range split into pieces its `before`, found by
    * `firstPass` over the parts of the pieces before the last (each cut into up to
    * `parallelism` / their number parts), from `resume`, where reading the range's first message
    * begins. A range whose transfers are too large goes back to one task.
    */
  def attach(ranges: Seq[JournalRange], resume: JournalRange => Long, parallelism: Int,
      firstPass: Seq[Part] => Seq[Result]): Planned = {
    val groups = mutable.LinkedHashMap[(String, Long, Long, Long), Vector[JournalRange]]()
    ranges.foreach(r =>
      groups((r.journal, r.start, r.end, r.revision)) = groups.getOrElse(
        (r.journal, r.start, r.end, r.revision), Vector.empty) :+ r)
    val split = groups.values.filter(_.size > 1).map(_.sortBy(_.piece.get.from)).toSeq
    if (split.isEmpty) return Planned(ranges)
    val nonLast = split.map(_.size - 1).sum
    val perPiece = math.max(1, (parallelism + nonLast - 1) / nonLast)
    val cut = split.map(pieces => pieces -> partsOf(pieces, resume(pieces.head), perPiece))
    val share = math.min(MaxTransferSize, MaxPlanTransferSize / math.max(1, cut.map(_._2.size).sum))
    val parts = cut.map { case (pieces, ps) =>
      pieces -> ps.map { case (i, p) => i -> p.copy(maxTransferSize = share) }
    }
    val results = firstPass(parts.flatMap(_._2.map(_._2))).iterator
    var prescanned = 0L
    val tooLarge = mutable.Buffer[String]()
    val planned = parts.map { case (pieces, ps) =>
      val byPiece = ps.map { case (i, _) => i -> results.next() }.groupBy(_._1)
      prescanned += byPiece.valuesIterator.flatten.map(_._2.bytes).sum
      var prefix = new StateTransfer()
      var fits = true
      val withStates = pieces.zipWithIndex.map { case (piece, i) =>
        if (i == 0) piece
        else {
          byPiece.getOrElse(i - 1, Nil).foreach {
            case (_, Result(Some(t), _)) if fits =>
              prefix = prefix.andThen(t)
              fits = prefix.size <= MaxTransferSize
            case _ => fits = false
          }
          piece.copy(piece = piece.piece.map(_.copy(before = Some(prefix))))
        }
      }
      val key = (pieces.head.journal, pieces.head.start)
      if (fits) key -> withStates
      else { tooLarge += pieces.head.journal; key -> Vector(pieces.head.copy(piece = None)) }
    }.toMap
    val out = mutable.Buffer[JournalRange]()
    val done = mutable.Set[(String, Long)]()
    ranges.foreach { r =>
      val key = (r.journal, r.start)
      planned.get(key) match {
        case Some(rs) => if (done.add(key)) out ++= rs
        case None => out += r
      }
    }
    Planned(out.toSeq, planned.count(_._2.size > 1), prescanned, tooLarge.toSeq)
  }

  /** The parts the pass reads of one range's `pieces`, each with its piece's index: each piece
    * but the last, cut into up to `n` parts of at least [[MinPartBytes]].
    */
  def partsOf(pieces: Seq[JournalRange], resume: Long, n: Int): Seq[(Int, Part)] =
    pieces.init.zipWithIndex.flatMap { case (piece, index) =>
      val p = piece.piece.get
      val bytes = p.until - p.from
      val k = math.max(1L, math.min(n.toLong, bytes / MinPartBytes))
      val at = (i: Long) => p.from + (BigInt(bytes) * i / k).toLong
      (0L until k).map { i =>
        val first = piece.first && i == 0
        index -> Part(piece.copy(piece = None), at(i), at(i + 1), if (first) Some(resume) else None)
      }
    }

  /** The results of the last few passes, by their parts: Spark plans a batch more than once (a
    * batch query's scan makes a new `Batch` each time, a stream's batch is planned again), and
    * what a pass finds depends on its parts (their journal, revision and offsets) alone.
    */
  final class Cache(entries: Int = 4) {
    private val passes = mutable.LinkedHashMap[Seq[Part], Seq[Result]]()

    def apply(parts: Seq[Part])(run: => Seq[Result]): Seq[Result] = synchronized {
      passes.get(parts) match {
        case Some(found) => found
        case None =>
          val found = run
          passes(parts) = found
          while (passes.size > entries) passes.remove(passes.head._1)
          found
      }
    }
  }

  /** Runs the pass over `parts` as a Spark job, a task per part. */
  def runJob(parts: Seq[Part], config: ReaderConfig, description: String): Seq[Result] =
    runJob(parts, description, (p: Part) => pass(p, config))

  /** Runs `pass` over `parts` as a Spark job, a task per part. Parts and results travel as Java
    * serialization's bytes: `spark.serializer` (Kryo on many clusters) would rebuild a
    * transfer's map as another class, which the JVM then calls as if it were not.
    */
  def runJob(parts: Seq[Part], description: String, pass: Part => Result): Seq[Result] = {
    val sc = SparkSession.active.sparkContext
    val previous = sc.getLocalProperty("spark.job.description")
    sc.setJobDescription(description)
    try sc.runJob(
        sc.parallelize(parts.map(JavaBytes.of), parts.size),
        (it: Iterator[Array[Byte]]) => it.map(b => JavaBytes.of(pass(JavaBytes.read[Part](b)))).toVector
      ).toSeq.flatten.map(JavaBytes.read[Result])
    finally sc.setJobDescription(previous)
  }

  private object JavaBytes {
    def of(o: AnyRef): Array[Byte] = {
      val bytes = new java.io.ByteArrayOutputStream()
      val out = new java.io.ObjectOutputStream(bytes)
      out.writeObject(o)
      out.close()
      bytes.toByteArray
    }

    def read[T](b: Array[Byte]): T = {
      val in = new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(b))
      try in.readObject().asInstanceOf[T]
      finally in.close()
    }
  }

  /** The pass over one part, in an executor. */
  def pass(part: Part, config: ReaderConfig): Result = {
    val r = part.range.copy(piece = Some(Piece(part.from, part.until)))
    val start = part.resume match {
      case Some(at) => RangeStart.Saved(SequencerState(at, Nil, r.revision, r.origin))
      case None => RangeStart.LineAt(part.from)
    }
    try {
      val reader = new JournalRangeReader(r, config, start, firstPass = true)
      val transfer = reader.transfer(part.maxTransferSize)
      Result(transfer, reader.metricArray(SourceMetrics.Names.indexOf(SourceMetrics.BytesRead)))
    } catch {
      case e: BrokerUnavailableException => throw GazetteErrors.brokerUnavailable(e)
      case e: ClientException => throw GazetteErrors.brokerRefused(e)
    }
  }
}
