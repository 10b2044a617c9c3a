package io.sparkgazette.client

/** Where a journal's bytes are, as its fragment listing says. A broker that cannot serve an
  * offset yet answers a read of it as one at the write head: a primary that has not yet listed its
  * store does so for every byte only the store holds. ListFragments waits for that first listing,
  * so a hole it shows is bytes no broker has listed: gone from the store, or (for as long as the
  * listing is older than the upload) a fragment on its way there.
  */
private[sparkgazette] object FragmentHoles {

  /** Where the bytes at or after `at` begin, as `fragments` list them: `at` where a fragment
    * covers it, the next fragment's begin after a hole, none where no fragment covers or follows it.
    */
  def resume(fragments: Seq[protocol.Fragment], at: Long): Option[Long] =
    if (fragments.exists(f => f.begin <= at && at < f.end)) Some(at)
    else fragments.iterator.map(_.begin).filter(_ > at).reduceOption(_ min _)

  /** [[resume]] as the journal's brokers list its fragments now. */
  def resume(client: GazetteClient, journal: String, at: Long): Option[Long] = {
    val fragments =
      try client.listFragments(journal)
      catch {
        // A broker that still answers a List, at once, is not what held the listing back: its store is.
        case e: BrokerUnavailableException if !e.isInstanceOf[StoreUnavailableException] =>
          client.storesOnce(journal, e.endpoint) match {
            case Some(stores) =>
              throw new StoreUnlistedException(journal, e.endpoint, stores.mkString(", "), at, e,
                client.config.retryTimeout)
            case None => throw e
          }
      }
    resume(fragments.flatMap(_.spec), at)
  }

  /** The first offset at or after `at` that `journal` holds, where a Read from `at` answered
    * `read`: past `at` only as far as the listing shows a hole.
    */
  def readableFrom(client: GazetteClient, journal: String, at: Long, read: Long): Long =
    if (read <= at) read else resume(client, journal, at).fold(read)(math.min(_, read))
}
