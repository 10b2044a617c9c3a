package io.sparkgazette.spark

/** Write heads behind the offsets a query has read, journal by journal, and for how long.
  *
  * A head behind the query's offset is not, at first, data loss: while a broker hands a journal
  * to another (a broker stopping, an assignment rebalanced), the new primary answers for a moment
  * with the end of the fragments it has listed, before the spool it takes over has reached it:
  * until the next append syncs its pipeline (about 100 ms under steady appends, with replication
  * 1), or its next listing of the fragment store (the journal's refresh interval) without one.
  * Such a head stands still, then comes back past the offset at once. So the source waits for it,
  * up to a journal's `graceMs`; a head still behind after that went backwards, and so did one that
  * grows while still behind: the journal is being written again below what the query has read
  * (its only broker lost an unpersisted spool). A head that went back for good and was then
  * overtaken by one append larger than the lost bytes, between two looks, cannot be told apart
  * from a hand-off by heads alone.
  */
private[spark] final class StaleHeads(graceMs: String => Long) {
  import StaleHeads._

  private var episodes = Map.empty[String, Episode]

  /** A verdict on each journal of `offsets` whose head is behind its offset; the journals back at
    * or past their offsets (or no longer read) start over.
    */
  def judge(offsets: Map[String, Long], heads: Map[String, Long], nowMs: Long): Map[String, Verdict] = {
    val behind = offsets.collect { case (j, o) if heads.get(j).exists(_ < o) => j -> (o, heads(j)) }
    val before = episodes
    val verdicts = behind.map { case (j, (offset, head)) =>
      val e = before.getOrElse(j, Episode(nowMs, head, reported = false))
      val waited = nowMs - e.since
      val grew = head > e.head
      j -> (if (!e.reported && !grew && waited < graceMs(j)) Waiting(offset, head, waited, first = !before.contains(j))
            else Behind(offset, head, waited, first = !e.reported, grew = grew))
    }
    episodes = verdicts.map { case (j, v) =>
      j -> Episode(before.get(j).fold(nowMs)(_.since), v.head, reported = v.isInstanceOf[Behind])
    }
    verdicts
  }

  /** How many journals are waiting for their heads to come back. */
  def waiting: Int = episodes.count(!_._2.reported)
}

private[spark] object StaleHeads {
  private final case class Episode(since: Long, head: Long, reported: Boolean)

  sealed trait Verdict { def offset: Long; def head: Long; def waitedMs: Long; def first: Boolean }

  /** Behind for less than the grace period: keep the offset and ask again at the next trigger. */
  final case class Waiting(offset: Long, head: Long, waitedMs: Long, first: Boolean) extends Verdict

  /** The head went backwards: behind for the whole grace period, or `grew` while behind (`first`
    * the first time said).
    */
  final case class Behind(offset: Long, head: Long, waitedMs: Long, first: Boolean, grew: Boolean = false) extends Verdict
}
