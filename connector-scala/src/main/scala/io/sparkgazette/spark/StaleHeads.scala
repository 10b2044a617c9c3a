package io.sparkgazette.spark

/** Write heads behind the offsets a query has read, journal by journal, and for how long.
  *
  * A head behind the query's offset is not, at first, data loss: while a broker hands a journal
  * to another (a broker stopping, an assignment rebalanced), the new primary answers for a moment
  * with the end of the fragments it has listed, before the spool it takes over has reached it:
  * until the next append syncs its pipeline (about 100 ms under steady appends, with replication
  * 1), or its next listing of the fragment store (the journal's refresh interval) without one.
  * The source waits for the head to come back, up to a journal's `graceMs`; a head still behind
  * after that counts as a write head that went backwards.
  */
private[spark] final class StaleHeads(graceMs: String => Long) {
  import StaleHeads._

  private var since = Map.empty[String, Long]
  private var reported = Set.empty[String]

  /** A verdict on each journal of `offsets` whose head is behind its offset; the journals back at
    * or past their offsets (or no longer read) start over.
    */
  def judge(offsets: Map[String, Long], heads: Map[String, Long], nowMs: Long): Map[String, Verdict] = {
    val behind = offsets.collect { case (j, o) if heads.get(j).exists(_ < o) => j -> (o, heads(j)) }
    val before = since
    since = behind.map { case (j, _) => j -> before.getOrElse(j, nowMs) }
    reported = reported.intersect(behind.keySet)
    behind.map { case (j, (offset, head)) =>
      val waited = nowMs - since(j)
      j -> (if (waited < graceMs(j)) Waiting(offset, head, waited, first = !before.contains(j))
            else {
              val first = !reported(j)
              reported += j
              Behind(offset, head, waited, first)
            })
    }
  }
}

private[spark] object StaleHeads {
  sealed trait Verdict { def offset: Long; def head: Long; def waitedMs: Long; def first: Boolean }

  /** Behind for less than the grace period: keep the offset and ask again at the next trigger. */
  final case class Waiting(offset: Long, head: Long, waitedMs: Long, first: Boolean) extends Verdict

  /** Behind for the whole grace period: the head went backwards (`first` the first time said). */
  final case class Behind(offset: Long, head: Long, waitedMs: Long, first: Boolean) extends Verdict
}
