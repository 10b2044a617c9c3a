package io.sparkgazette.client.auth

import java.time.{Duration, Instant}

/** What one RPC (or one reader) does when brokers refuse its token (UNAUTHENTICATED): the source is
  * asked for a token again, and
  *  - a different one is tried at once, up to [[Refusals.MaxFresh]] times in a row;
  *  - the same one, expired (or expiring within [[Refusals.ClockSkew]], as a broker whose clock runs
  *    ahead sees it), from a source that may renew it (a file being rewritten, a provider), is tried
  *    again at the caller's retry pace, within its retry timeout;
  *  - otherwise the RPC fails: no token the brokers accept is to be had.
  */
final class Refusals(source: TokenSource, now: () => Instant = () => Instant.now()) {
  import Refusals._

  private var fresh = 0

  /** Progress was made: refusals start counting again. */
  def reset(): Unit = fresh = 0

  def refused(used: Option[Token]): Next = {
    val next = source.renew(used)
    val expired = next.exists(_.expired(now()))
    // The brokers judge `exp` by their own clocks: a token that expires within ClockSkew of this
    // clock may already have expired by theirs.
    val expiring = next.exists(_.expired(now().plus(ClockSkew)))
    if (next != used && fresh < MaxFresh) {
      fresh += 1
      RetryNow
    } else if (next == used && expiring && source.renewable) RetryLater(next)
    else GiveUp(next, expired)
  }
}

object Refusals {
  sealed trait Next

  /** Another token: try it now. */
  case object RetryNow extends Next

  /** The same token, expired: try again after a pause, by when it may have been renewed. */
  final case class RetryLater(token: Option[Token]) extends Next

  /** No token the brokers accept: fail, naming `token`'s expiry. */
  final case class GiveUp(token: Option[Token], expired: Boolean) extends Next

  val MaxFresh = 3

  /** How far the brokers' clocks may run ahead of this one (JWT libraries allow as much leeway). */
  val ClockSkew: Duration = Duration.ofSeconds(60)
}
