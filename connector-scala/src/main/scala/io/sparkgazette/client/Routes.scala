package io.sparkgazette.client

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

import io.sparkgazette.client.protocol.{Header, Route}

/** Where to send each journal's RPCs.
  *
  * Routes are learned from List responses and from the headers brokers attach to responses; a
  * journal with a known route goes straight to its primary (which can serve reads and must
  * serve appends), anything else goes to a configured broker, which proxies. A failed attempt
  * forgets the route and moves on to the next broker, so a stopped broker is routed around.
  */
final class Routes(configured: Seq[String]) {
  require(configured.nonEmpty, "at least one broker endpoint is required")
  configured.foreach(Channels.parse)

  private val routes = new ConcurrentHashMap[String, Route]()
  private val known = new ConcurrentHashMap[String, java.lang.Boolean]()
  private val next = new AtomicInteger()

  /** The endpoint for the next RPC of `journal`. */
  def endpoint(journal: String): String =
    Option(routes.get(journal)).flatMap(primaryOf).getOrElse(fallback())

  /** Records the route a broker reported for `journal`. */
  def learn(journal: String, route: Option[Route]): Unit =
    route.filter(r => r.endpoints.nonEmpty && r.endpoints.size == r.members.size).foreach { r =>
      routes.put(journal, r)
      r.endpoints.foreach(e => known.put(e, true))
    }

  def learnFrom(journal: String, header: Option[Header]): Unit = learn(journal, header.flatMap(_.route))

  /** Forgets `journal`'s route after `endpoint` failed it, and moves the fallback past `endpoint`. */
  def failed(journal: String, endpoint: String): Unit = {
    routes.remove(journal)
    if (candidates.lift(Math.floorMod(next.get(), candidates.size)).contains(endpoint)) next.incrementAndGet()
  }

  private def primaryOf(r: Route): Option[String] =
    if (r.primary >= 0 && r.primary < r.endpoints.size) Some(r.endpoints(r.primary))
    else r.endpoints.headOption

  // Configured brokers first, then every other broker a route has named.
  private def candidates: Seq[String] = {
    val learned = known.keySet().toArray(Array.empty[String]).filterNot(configured.contains).sorted
    configured ++ learned
  }

  private def fallback(): String = {
    val c = candidates
    c(Math.floorMod(next.get(), c.size))
  }
}
