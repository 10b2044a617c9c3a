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
        // The broker answered the Read that sent us here: what holds the listing back is its store.
        case e: BrokerUnavailableException if !e.isInstanceOf[StoreUnavailableException] =>
          throw new StoreUnlistedException(journal, e.endpoint, stores(client, journal), at, e,
            client.config.retryTimeout)
      }
    resume(fragments.flatMap(_.spec), at)
  }

  private def stores(client: GazetteClient, journal: String): String =
    scala.util.Try(client.list(s"name=$journal").flatMap(_.spec).flatMap(_.fragment).flatMap(_.stores))
      .toOption.filter(_.nonEmpty).fold("(its spec could not be read)")(_.mkString(", "))

  /** The first offset at or after `at` that `journal` holds, where a Read from `at` answered
    * `read`: past `at` only as far as the listing shows a hole.
    */
  def readableFrom(client: GazetteClient, journal: String, at: Long, read: Long): Long =
    if (read <= at) read else resume(client, journal, at).fold(read)(math.min(_, read))
}
