package io.sparkgazette.spark
package source
package planning

/** Write heads behind the offsets a query has read, journal by journal, and for how long.
  *
  * A head behind the query's offset is not, at first, data loss: while a broker hands a journal
  * to another (a broker stopping, an assignment rebalanced), the new primary answers for a moment
  * with the end of the fragments it has listed, before the spool it takes over has reached it:
  * until the next append syncs its pipeline (about 100 ms under steady appends, with replication
  * 1), or its next listing of the fragment store (the journal's refresh interval) without one.
  * Such a head comes back past the offset at once. So the source waits for it, up to a journal's
  * `graceMs`; a head still behind after that went backwards. A head that grows while still
  * behind may be a journal written again below what the query has read (its only broker lost an
  * unpersisted spool), or a new primary listing persisted fragments one by one: the caller
  * tells them apart ([[Grew]]). Appends that take a journal written again past the offset between
  * two looks at its head cannot be told from a hand-off by heads alone.
  */
private[source] final class StaleHeads(graceMs: String => Long) {
  import StaleHeads._

  private var episodes = Map.empty[String, Episode]

  /** A verdict on each journal of `offsets` whose head is behind its offset; the journals back at
    * or past their offsets (or no longer read) start over.
    */
  def judge(offsets: Map[String, Long], heads: Map[String, Long], nowMs: Long): Map[String, Verdict] = {
    val behind = offsets.collect { case (j, o) if heads.get(j).exists(_ < o) => j -> ((o, heads(j))) }
    val before = episodes
    val verdicts = behind.map { case (j, (offset, head)) =>
      val e = before.getOrElse(j, Episode(nowMs, head, head, reported = false))
      val waited = nowMs - e.since
      val lowest = math.min(e.lowest, head)
      j ->
        (if (e.reported || waited >= graceMs(j)) Behind(offset, head, lowest, waited, first = !e.reported)
         else if (head > e.head) Grew(offset, head, lowest, waited)
         else Waiting(offset, head, waited, first = !before.contains(j)))
    }
    episodes = verdicts.map { case (j, v) =>
      val e = before.getOrElse(j, Episode(nowMs, v.head, v.head, reported = false))
      j -> Episode(e.since, v.head, math.min(e.lowest, v.head), reported = v.isInstanceOf[Behind])
    }
    verdicts
  }

  /** Marks a journal's head as gone backwards (a [[Grew]] the caller confirmed). */
  def confirm(journal: String): Unit =
    episodes.get(journal).foreach(e => episodes = episodes.updated(journal, e.copy(reported = true)))

  /** How many journals are waiting for their heads to come back. */
  def waiting: Int = episodes.count(!_._2.reported)
}

private[source] object StaleHeads {
  private final case class Episode(since: Long, head: Long, lowest: Long, reported: Boolean)

  sealed trait Verdict { def offset: Long; def head: Long; def waitedMs: Long }

  /** Behind for less than the grace period: keep the offset and ask again at the next trigger. */
  final case class Waiting(offset: Long, head: Long, waitedMs: Long, first: Boolean) extends Verdict

  /** Grew while behind, within the grace period: gone backwards if the journal holds bytes below
    * the offset written since `lowest`, the lowest head of the episode; else as [[Waiting]].
    */
  final case class Grew(offset: Long, head: Long, lowest: Long, waitedMs: Long) extends Verdict

  /** Behind for the whole grace period (or confirmed written again): the head went backwards, to
    * `lowest` at least (`first` the first time said).
    */
  final case class Behind(offset: Long, head: Long, lowest: Long, waitedMs: Long, first: Boolean) extends Verdict
}
