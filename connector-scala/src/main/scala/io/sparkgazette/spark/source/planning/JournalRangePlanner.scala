package io.sparkgazette.spark
package source
package planning

import scala.collection.mutable

import io.sparkgazette.spark.source.offsets.{JournalRange, Piece}

/** Pure planning of a trigger's byte ranges: where each journal's range ends, given where it
  * starts, the write heads, and the rate limits. No I/O, so it is unit-tested on its own.
  */
private[spark] object JournalRangePlanner {

  /** End offsets that read at most `maxBytes` in total, split across journals in proportion to
    * their backlog; every journal with a backlog gets at least one byte, so that it moves on: a
    * range holds the messages that end in it, so a message longer than its journal's share is
    * read by the batch whose range reaches its end.
    */
  def capped(start: Map[String, Long], heads: Map[String, Long], maxBytes: Long): Map[String, Long] = {
    val backlog = heads.map { case (j, h) => j -> math.max(0L, h - start.getOrElse(j, h)) }
    val total = backlog.values.sum
    if (total <= maxBytes) heads
    else
      heads.map { case (j, h) =>
        val b = backlog(j)
        if (b == 0) j -> h
        else {
          val share = math.max(1L, (BigInt(b) * maxBytes / total).toLong)
          j -> (start(j) + math.min(b, share))
        }
      }
  }

  /** How far each journal may be read this trigger: its write head, capped by the heads an
    * AvailableNow run began with, and never below where the query stands (a head read from a
    * lagging replica, or a cap taken before a restart, must not move an offset backwards).
    */
  def ceiling(start: Map[String, Long], heads: Map[String, Long], cap: Option[Map[String, Long]]): Map[String, Long] =
    heads.map { case (j, h) =>
      val s = start.getOrElse(j, h)
      // A journal the AvailableNow run did not know when it began is left for the next run.
      j -> math.max(s, cap.fold(h)(c => c.get(j).fold(s)(math.min(h, _))))
    }

  /** Bytes between `start` and `heads`, journal by journal (journals absent from `start` count
    * from zero).
    */
  def behind(start: Map[String, Long], heads: Map[String, Long]): Map[String, Long] =
    heads.map { case (j, h) => j -> math.max(0L, h - start.getOrElse(j, 0L)) }

  /** Whether a trigger with `available` new bytes should wait for more: fewer than `minBytes`
    * and the last batch was planned less than `maxDelayMs` ago.
    */
  def shouldWait(available: Long, minBytes: Option[Long], sinceLastBatchMs: Long, maxDelayMs: Long): Boolean =
    minBytes.exists(min => available < min && sinceLastBatchMs < maxDelayMs)

  /** Packs a batch's ranges into tasks: a range of at least `targetBytes` is a task of its own;
    * smaller ones share tasks of about `targetBytes` each, and are spread over at least `minTasks`
    * tasks in all where there are that many ranges, so that every core has some. Ranges go largest
    * first to the task with the fewest bytes so far; the result depends on the ranges' order and
    * sizes alone.
    */
  def pack[A](ranges: Seq[A], bytes: A => Long, targetBytes: Long, minTasks: Int): Seq[Seq[A]] = {
    val (large, small) = ranges.partition(bytes(_) >= targetBytes)
    if (small.isEmpty) return large.map(Seq(_))
    val total = small.iterator.map(bytes).sum
    val byBytes = math.max(1L, (total + targetBytes - 1) / targetBytes)
    val n = math.max(byBytes, math.min(small.size.toLong, math.max(1L, minTasks.toLong - large.size))).toInt
    val tasks = Array.fill(n)(Vector.empty[A])
    val loads = Array.fill(n)(0L)
    val queue = scala.collection.mutable.PriorityQueue.empty[(Long, Int)](Ordering.by[(Long, Int), (Long, Int)](t =>
        (-t._1, -t._2)))
    (0 until n).foreach(i => queue.enqueue((0L, i)))
    small.sortBy(a => -bytes(a)).foreach { a =>
      val (load, i) = queue.dequeue()
      tasks(i) :+= a
      loads(i) = load + bytes(a)
      queue.enqueue((loads(i), i))
    }
    large.map(Seq(_)) ++ tasks.toSeq.filter(_.nonEmpty)
  }

  /** Splits large ranges that can be split (read uncommitted, ndjson: `splittable`) into
    * [[Piece]]s for tasks of their own: each into pieces of `targetBytes` or a little more, then the
    * ranges with the largest pieces into more, until there are `minTasks` ranges and pieces in
    * all or the pieces would be smaller than `minPieceBytes`. Pieces of a range split it at
    * evenly spaced offsets; the result depends on the ranges alone.
    */
  def split(ranges: Seq[JournalRange], splittable: JournalRange => Boolean, targetBytes: Long, minTasks: Int,
      minPieceBytes: Long = MinPieceBytes): Seq[JournalRange] = {
    val can = ranges.map(r => r.piece.isEmpty && splittable(r)).toArray
    val counts = ranges.indices.map { i =>
      val b = ranges(i).bytes
      // Pieces of at least the target each: each is then a task of its own when packed.
      if (can(i) && b >= 2 * targetBytes) math.min(MaxPieces, b / targetBytes) else 1L
    }.toArray
    val pieceBytes = (i: Int) => ranges(i).bytes / (counts(i) + 1)
    val queue = mutable.PriorityQueue.empty[(Long, Int)](Ordering.by[(Long, Int), (Long, Int)](t => (t._1, -t._2)))
    ranges.indices.filter(i => can(i) && pieceBytes(i) >= minPieceBytes).foreach(i => queue.enqueue((pieceBytes(i), i)))
    var total = counts.sum
    while (total < minTasks && queue.nonEmpty) {
      val (_, i) = queue.dequeue()
      counts(i) += 1
      total += 1
      if (pieceBytes(i) >= minPieceBytes && counts(i) < MaxPieces) queue.enqueue((pieceBytes(i), i))
    }
    ranges.indices.flatMap { i =>
      val r = ranges(i)
      val n = counts(i)
      if (n == 1) Seq(r)
      else {
        val at = (k: Long) => r.start + (BigInt(r.bytes) * k / n).toLong
        (0L until n).map(k => r.copy(piece = Some(Piece(at(k), if (k == n - 1) Long.MaxValue else at(k + 1)))))
      }
    }
  }

  /** Pieces smaller than this are not worth a task of their own to reach `minPartitions`. */
  val MinPieceBytes: Long = 1L << 20

  /** No range is split into more pieces than this. */
  val MaxPieces: Long = 1L << 16

  /** The source's progress metrics: bytes between the consumed offsets and the last write heads
    * seen, in total, at most and on average per journal, and the number of journals.
    */
  def metrics(consumed: Map[String, Long], heads: Map[String, Long]): Map[String, String] = {
    val behindBy = behind(consumed, heads).values
    Map(
      "bytesBehindHead" -> behindBy.sum.toString,
      "maxBytesBehindHead" -> (if (behindBy.isEmpty) 0L else behindBy.max).toString,
      "avgBytesBehindHead" -> String.format(java.util.Locale.ROOT, "%.1f",
        Double.box(if (behindBy.isEmpty) 0.0 else behindBy.sum.toDouble / behindBy.size)),
      "journals" -> heads.size.toString
    )
  }
}
