package io.sparkgazette.client.auth

import java.nio.charset.StandardCharsets
import java.nio.file.attribute.FileTime
import java.nio.file.{Files, Path}
import java.time.Instant
import java.util.Base64

import org.scalatest.funsuite.AnyFunSuite

/** Where tokens come from and what a refusal leads to, without brokers (tests/tokens has them). */
class TokenSourceSuite extends AnyFunSuite {
  private def jwt(exp: Long, salt: String = ""): String = {
    val b64 = Base64.getUrlEncoder.withoutPadding
    def part(s: String) = b64.encodeToString(s.getBytes(StandardCharsets.UTF_8))
    s"${part("""{"alg":"HS256"}""")}.${part(s"""{"cap":62,"sel":{},"exp":$exp$salt}""")}.c2ln"
  }

  test("a JWT's exp is read from its claims; a token without one, or no JWT, has none") {
    assert(Token.expiry(jwt(1767225600)).contains(Instant.parse("2026-01-01T00:00:00Z")))
    assert(Token.expiry("e30.e30.c2ln").isEmpty) // {} claims
    assert(Token.expiry("not a jwt").isEmpty && Token.expiry("a.!!.c").isEmpty)
    val t = new Token(jwt(1767225600))
    assert(!t.toString.contains(t.value.split('.')(1)) && t.toString.contains("2026-01-01"))
    assert(t.expired(Instant.parse("2026-01-01T00:00:00Z")) && !t.expired(Instant.parse("2025-12-31T23:59:59Z")))
  }

  test("exp is the claims' own, not a member of a nested claim that comes first") {
    val b64 = Base64.getUrlEncoder.withoutPadding
    def part(s: String) = b64.encodeToString(s.getBytes(StandardCharsets.UTF_8))
    val nested = s"${part("""{"alg":"HS256"}""")}.${part(
        """{"act":{"sub":"x","exp":1},"note":"\"exp\": 2","exp":1767225600}""")}.c2ln"
    assert(Token.expiry(nested).contains(Instant.parse("2026-01-01T00:00:00Z")))
    assert(Token.expiry(s"${part("{}")}.${part("""{"act":{"exp":1}}""")}.c2ln").isEmpty)
    assert(Token.expiry(s"${part("{}")}.${part("""{"exp":"soon"}""")}.c2ln").isEmpty)
  }

  private def write(p: Path, s: String, mtime: Long): Unit = {
    Files.write(p, s.getBytes(StandardCharsets.UTF_8))
    Files.setLastModifiedTime(p, FileTime.fromMillis(mtime))
  }

  test("a token file is read again when it changes, at least every second, and at once after a refusal") {
    val p = Files.createTempFile("token", "")
    var now = 0L
    val source = new FileTokens(Credentials.File(p.toString), () => now)
    write(p, jwt(100) + "\n", 1000)
    assert(source.current().map(_.value).contains(jwt(100)))
    write(p, jwt(2000), 2000) // longer, and newer
    now += 1000000 // a millisecond
    assert(source.current().map(_.value).contains(jwt(2000)))
    // Rewritten to the same length within the same clock tick: seen after a second, or at a refusal.
    write(p, jwt(3000), 2000)
    now += 1000000
    assert(source.current().map(_.value).contains(jwt(2000)))
    assert(source.renew(Some(new Token(jwt(2000)))).map(_.value).contains(jwt(3000)))
    write(p, jwt(4000), 2000)
    now += 1000000000L
    assert(source.current().map(_.value).contains(jwt(4000)))
    assert(source.latest.map(_.value).contains(jwt(4000)))
  }

  test("a token file caught empty or gone keeps the last token; without one it fails naming the file") {
    val p = Files.createTempFile("token", "")
    val source = new FileTokens(Credentials.File(p.toString))
    val empty = intercept[TokenUnavailableException](source.current())
    assert(empty.getMessage == s"token file $p is empty")
    write(p, jwt(100), 1000)
    assert(source.current().map(_.value).contains(jwt(100)))
    write(p, "", 3000)
    assert(source.renew(None).map(_.value).contains(jwt(100)))
    Files.delete(p)
    assert(source.renew(None).map(_.value).contains(jwt(100)))
    val gone = intercept[TokenUnavailableException](new FileTokens(Credentials.File(p.toString)).current())
    assert(gone.getMessage == s"token file $p cannot be read on this host: no such file")
  }

  test("a token file caught half-written in place keeps the last token, as one caught empty does") {
    val p = Files.createTempFile("token", "")
    write(p, jwt(100), 1000)
    val source = new FileTokens(Credentials.File(p.toString))
    val last = source.current().get
    val next = jwt(5000)
    write(p, next.take(next.length / 2), 2000) // rewritten in place (not renamed over), caught half-way
    // Refused at its exp while the rewrite goes on: the query waits for the file rather than fail.
    val refusals = new Refusals(source, () => Instant.ofEpochSecond(150))
    val outcomes = Seq(refusals.refused(Some(last)), refusals.refused(source.latest))
    assert(!outcomes.exists(_.isInstanceOf[Refusals.GiveUp]), s"$outcomes, sent ${source.latest}")
  }

  test("a provider is configured once and asked again once its token has used four fifths of its life") {
    var now = Instant.parse("2026-01-01T00:00:00Z")
    val options = Map("authTokenProvider.lifetime" -> "100")
    val source = new ProviderTokens(Credentials.Provider(classOf[CountingProvider].getName, options), () => now)
    val first = source.current().get
    assert(first.expiry.contains(now.plusSeconds(100)))
    val provider = CountingProvider.last
    assert(provider.configured == options && provider.asked == Seq(false))
    now = now.plusSeconds(79)
    assert(source.current().contains(first) && provider.asked == Seq(false))
    now = now.plusSeconds(1)
    val second = source.current().get
    assert(second != first && provider.asked == Seq(false, false))
    // After a refusal of the token it holds, it asks for a new one; of an older token, it has one.
    val third = source.renew(Some(second)).get
    assert(third != second && provider.asked == Seq(false, false, true))
    assert(source.renew(Some(second)).contains(third) && provider.asked.size == 3)
  }

  test("a provider that fails, or returns nothing, fails naming its class and not its message") {
    val failing = new ProviderTokens(Credentials.Provider(classOf[FailingProvider].getName, Map.empty))
    val e = intercept[TokenUnavailableException](failing.current())
    assert(e.getMessage == s"token provider ${classOf[FailingProvider].getName} failed: java.io.IOException")
    val absent = intercept[TokenUnavailableException](
      new ProviderTokens(Credentials.Provider("no.such.Tokens", Map.empty)).current())
    assert(absent.getMessage == "token provider class no.such.Tokens is not on the classpath")
  }

  test("a provider's failure keeps its message out of everything the failure prints, causes included") {
    // Spark logs a failed task's exception with its causes, on the driver and the executor.
    val e = intercept[TokenUnavailableException](
      new ProviderTokens(Credentials.Provider(classOf[FailingProvider].getName, Map.empty)).current())
    val printed = new java.io.StringWriter
    e.printStackTrace(new java.io.PrintWriter(printed))
    assert(!printed.toString.contains("s3cr3t"), printed.toString.split("\n").filter(_.contains("s3cr3t")).toList)
  }

  private final class Scripted(tokens: Option[Token]*) extends TokenSource(Credentials.File("/t")) {
    private var left = tokens.toList
    protected def fetch(): Option[Token] = left.head
    protected def fetchAfter(refused: Option[Token]): Option[Token] = {
      if (left.size > 1) left = left.tail
      left.head
    }
  }

  test("a refusal: a new token is tried at once, an expired one waits for its renewal, others give up") {
    val now = Instant.ofEpochSecond(1000)
    val (old, fresh, expired) = (new Token(jwt(2000)), new Token(jwt(3000)), new Token(jwt(500)))
    assert(new Refusals(new Scripted(Some(old), Some(fresh)), () => now).refused(Some(old)) == Refusals.RetryNow)
    assert(new Refusals(new Scripted(Some(expired)), () => now).refused(Some(expired)) ==
      Refusals.RetryLater(Some(expired)))
    // Current and refused: a wrong key or a missing capability, which the same token will not cure.
    assert(new Refusals(new Scripted(Some(old)), () => now).refused(Some(old)) ==
      Refusals.GiveUp(Some(old), expired = false))
    // A broker whose clock runs ahead refuses a token this clock holds alive for a few seconds
    // more: it is renewed as an expired one is, not given up on.
    val expiring = new Token(jwt(1000 + 30))
    assert(new Refusals(new Scripted(Some(expiring)), () => now).refused(Some(expiring)) ==
      Refusals.RetryLater(Some(expiring)))
    // A fixed token cannot be renewed: expired, it is the end.
    val fixed = TokenSource(Credentials.Fixed(new Secret(expired.value)))
    assert(new Refusals(fixed, () => now).refused(Some(expired)) == Refusals.GiveUp(Some(expired), expired = true))
    assert(new Refusals(TokenSource(Credentials.Anonymous), () => now).refused(None) ==
      Refusals.GiveUp(None, expired = false))
    // Fresh tokens refused in a row: a bounded number of tries.
    val many = (1 to 10).map(i => Some(new Token(jwt(3000 + i))))
    val refusals = new Refusals(new Scripted(many: _*), () => now)
    val tries = Iterator.continually(refusals.refused(None)).takeWhile(_ == Refusals.RetryNow).size
    assert(tries == Refusals.MaxFresh)
    refusals.reset()
    assert(refusals.refused(None) == Refusals.RetryNow)
  }

  test("a provider that does not answer fails the call waiting on it, and those queued behind it, in bounded time") {
    val source = new ProviderTokens(Credentials.Provider(classOf[SilentTokenProvider].getName, Map.empty),
      askTimeout = java.time.Duration.ofSeconds(1))
    import scala.concurrent.ExecutionContext.Implicits.global
    val calls = (1 to 3).map(_ => scala.concurrent.Future(scala.util.Try(source.current())))
    try {
      val outcomes = calls.map(c => scala.concurrent.Await.result(c, scala.concurrent.duration.Duration(20, "s")))
      outcomes.foreach(o => assert(o.failed.get.isInstanceOf[TokenUnavailableException], o))
      assert(outcomes.head.failed.get.getMessage.contains("gave no token within 1 s"))
    } finally SilentTokenProvider.answer.countDown()
  }
}

/** Tokens valid for `authTokenProvider.lifetime` seconds from now, each a new one. */
class CountingProvider extends AuthTokenProvider {
  var configured: Map[String, String] = Map.empty
  var asked: Seq[Boolean] = Nil
  CountingProvider.last = this

  override def configure(options: java.util.Map[String, String]): Unit = {
    import scala.jdk.CollectionConverters._
    configured = options.asScala.toMap
  }

  override def token(refused: Boolean): String = {
    asked :+= refused
    val exp = Instant.parse("2026-01-01T00:00:00Z").getEpochSecond + configured("authTokenProvider.lifetime").toLong
    val b64 = Base64.getUrlEncoder.withoutPadding
    s"e30.${b64.encodeToString(s"""{"exp":${exp + (asked.size - 1) * 80}}""".getBytes(StandardCharsets.UTF_8))}.c2ln"
  }
}

object CountingProvider {
  @volatile var last: CountingProvider = _
}

class FailingProvider extends AuthTokenProvider {
  override def token(refused: Boolean): String = throw new java.io.IOException("s3cr3t in a message")
}

/** A provider whose token service does not answer (until the test lets it). */
class SilentTokenProvider extends AuthTokenProvider {
  override def token(refused: Boolean): String = { SilentTokenProvider.answer.await(); "a.b.c" }
}

object SilentTokenProvider {
  val answer = new java.util.concurrent.CountDownLatch(1)
}
