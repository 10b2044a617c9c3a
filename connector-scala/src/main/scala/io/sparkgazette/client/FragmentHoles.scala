package io.sparkgazette.client

/** Where a journal's bytes are, as its fragment listing says. A Read is no witness of a hole: a
  * broker answers a read before its first fragment with an offset jump, and a broker that has
  * only just become primary, its own fragments replicated but its store not yet listed, sees the
  * store's fragments as missing. ListFragments waits for that listing, so a hole it shows is
  * bytes gone from the store.
  */
private[sparkgazette] object FragmentHoles {

  /** Where the bytes at or after `at` begin: `at` where a fragment covers it, the next
    * fragment's begin after a hole, none where no fragment begins after it.
    */
  def resume(client: GazetteClient, journal: String, at: Long): Option[Long] = {
    val fragments = client.listFragments(journal).flatMap(_.spec)
    if (fragments.exists(f => f.begin <= at && at < f.end)) Some(at)
    else fragments.iterator.map(_.begin).filter(_ > at).reduceOption(_ min _)
  }

  /** The first offset at or after `at` that `journal` holds, where a Read from `at` answered
    * `read`: a jump goes only as far as the listing shows a hole.
    */
  def readableFrom(client: GazetteClient, journal: String, at: Long, read: Long): Long =
    if (read <= at) read else resume(client, journal, at).fold(read)(math.min(_, read))
}
