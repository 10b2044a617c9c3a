package io.sparkgazette.client.auth

import java.nio.charset.StandardCharsets
import java.nio.file.attribute.BasicFileAttributes
import java.nio.file.{Files, NoSuchFileException, Path, Paths}
import java.time.{Duration => JDuration, Instant}
import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

/** The bearer token a client sends now, from its [[Credentials]]: [[current]] before each call,
  * [[renew]] after a broker refused one. [[latest]] is what `current` last gave, for the channels'
  * interceptor, which must not wait on a file or a provider.
  */
abstract class TokenSource(val credentials: Credentials) {
  @volatile private var latest_ : Option[Token] = None

  def latest: Option[Token] = latest_

  /** The token for the next call (None: none is sent). Throws [[TokenUnavailableException]]. */
  final def current(): Option[Token] = remember(fetch())

  /** After a broker refused `refused`: a token to try instead, possibly the same one when there is
    * no other. Throws [[TokenUnavailableException]].
    */
  final def renew(refused: Option[Token]): Option[Token] = remember(fetchAfter(refused))

  /** Whether a later [[renew]] may give another token than the one it gave now. */
  def renewable: Boolean = true

  protected def fetch(): Option[Token]
  protected def fetchAfter(refused: Option[Token]): Option[Token]

  private def remember(t: Option[Token]): Option[Token] = { latest_ = t; t }
}

object TokenSource {
  private val shared = new ConcurrentHashMap[Credentials, TokenSource]()

  /** The one source of `credentials` in this JVM: the tasks of an executor share a file's reads and
    * a provider's tokens.
    */
  def apply(credentials: Credentials): TokenSource = credentials match {
    case Credentials.Anonymous => Fixed(Credentials.Anonymous, None)
    case c @ Credentials.Fixed(secret) => Fixed(c, Some(new Token(secret.value)))
    case c => shared.computeIfAbsent(c, create)
  }

  private def create(c: Credentials): TokenSource = c match {
    case f: Credentials.File => new FileTokens(f)
    case p: Credentials.Provider => new ProviderTokens(p)
    case other => apply(other)
  }

  private final case class Fixed(c: Credentials, token: Option[Token]) extends TokenSource(c) {
    override def renewable: Boolean = false
    protected def fetch(): Option[Token] = token
    protected def fetchAfter(refused: Option[Token]): Option[Token] = token
  }
}

/** The token in a file that a control plane rewrites: read again when its modification time or size
  * changes, at least once every [[FileTokens.ReadEvery]] (a rewrite within a coarse clock tick, to
  * the same length, changes neither), and at once after a refusal. A file that cannot be read or is
  * empty (caught mid-rewrite) leaves the last token in use; without one, it fails.
  */
private[auth] final class FileTokens(c: Credentials.File, nanoTime: () => Long = () => System.nanoTime())
    extends TokenSource(c) {
  private val path: Path = Paths.get(c.path)
  private var token: Option[Token] = None
  private var stamp: (Long, Long) = (-1L, -1L)
  private var readAt = 0L

  protected def fetch(): Option[Token] = synchronized {
    val now = nanoTime()
    val seen = attributes()
    if (token.isEmpty || seen != stamp || now - readAt >= FileTokens.ReadEvery.toNanos) read(now, seen)
    token
  }

  protected def fetchAfter(refused: Option[Token]): Option[Token] = synchronized {
    read(nanoTime(), attributes())
    token
  }

  private def attributes(): (Long, Long) =
    try {
      val a = Files.readAttributes(path, classOf[BasicFileAttributes])
      (a.lastModifiedTime().toMillis, a.size())
    } catch { case NonFatal(_) => (-1L, -1L) }

  private def read(now: Long, seen: (Long, Long)): Unit = {
    val text =
      try Some(new String(Files.readAllBytes(path), StandardCharsets.UTF_8).trim)
      catch {
        case NonFatal(e) if token.isEmpty =>
          val why = e match {
            case _: NoSuchFileException => "no such file"
            case other => other.toString
          }
          throw new TokenUnavailableException(c, s"token file ${c.path} cannot be read on this host: $why", e)
        case NonFatal(_) => None
      }
    // Text that is not a whole JWT (three parts; a file rewritten in place, caught half-written) is
    // treated as an empty file: the last token stays in use.
    text.filter(t => t.nonEmpty && t.count(_ == '.') == 2 && !t.endsWith(".")) match {
      case Some(t) =>
        token = Some(new Token(t))
        stamp = seen
        readAt = now
      case None if token.isEmpty =>
        val what = if (text.forall(_.isEmpty)) "is empty" else "holds no JWT (three dot-separated parts)"
        throw new TokenUnavailableException(c, s"token file ${c.path} $what")
      case None =>
    }
  }
}

private[auth] object FileTokens {
  val ReadEvery: JDuration = JDuration.ofSeconds(1)
}

/** Tokens from an [[AuthTokenProvider]]: one is kept until it has used four fifths of its lifetime
  * (from when it came to its `exp`; a token without `exp` until refused), then the provider is asked
  * again. After a refusal it is asked for a new one, unless another caller already got one.
  */
private[auth] final class ProviderTokens(c: Credentials.Provider, now: () => Instant = () => Instant.now(),
    askTimeout: JDuration = ProviderTokens.AskTimeout)
    extends TokenSource(c) {
  // Made on the asking thread, not through a lazy val: a lazy val's initializer takes this
  // object's monitor, which the caller holds while it waits for the ask.
  private var made: AuthTokenProvider = _

  private def provider: AuthTokenProvider = {
    if (made == null) made = ProviderTokens.bounded(c, ProviderTokens.instantiate(c), askTimeout)
    made
  }
  private var token: Option[Token] = None
  private var renewAt: Option[Instant] = None

  protected def fetch(): Option[Token] = synchronized {
    if (token.isEmpty || renewAt.exists(!_.isAfter(now()))) ask(refused = false)
    token
  }

  protected def fetchAfter(refused: Option[Token]): Option[Token] = synchronized {
    if (token.isEmpty || token == refused) ask(refused = true)
    token
  }

  private def ask(refused: Boolean): Unit = {
    val got = now()
    val t =
      try {
        val p = provider
        Option(ProviderTokens.bounded(c, p.token(refused), askTimeout)).map(_.trim).filter(_.nonEmpty)
      } catch {
        case e: TokenUnavailableException => throw e
        // Neither the provider's message nor its exception as a cause: Spark logs a failed task's
        // causes, and a provider's message may hold what it was given.
        case NonFatal(e) =>
          throw new TokenUnavailableException(c, s"token provider ${c.className} failed: ${e.getClass.getName}")
      }
    val fresh = new Token(t.getOrElse(throw new TokenUnavailableException(c,
          s"token provider ${c.className} returned no token")))
    token = Some(fresh)
    renewAt = fresh.expiry.map(exp => got.plusMillis(math.max(0L, (exp.toEpochMilli - got.toEpochMilli) * 4 / 5)))
  }
}

private[sparkgazette] object ProviderTokens {

  /** How long a provider may take to hand out a token: a provider that never answers must fail the
    * call that waits on it (and the calls queued behind it), not hang the query.
    */
  val AskTimeout: JDuration = JDuration.ofSeconds(30)

  private val asking = java.util.concurrent.Executors.newCachedThreadPool { (r: Runnable) =>
    val t = new Thread(r, "gazette-token-provider")
    t.setDaemon(true)
    t
  }

  /** `call` on a thread of its own, given up after `timeout`. */
  def bounded[T](c: Credentials.Provider, body: => T, timeout: JDuration): T = {
    val f = asking.submit(new java.util.concurrent.Callable[T] { def call(): T = body })
    try f.get(timeout.toMillis, java.util.concurrent.TimeUnit.MILLISECONDS)
    catch {
      case _: java.util.concurrent.TimeoutException =>
        f.cancel(true)
        throw new TokenUnavailableException(
          c, s"token provider ${c.className} gave no token within ${timeout.getSeconds} s")
      case e: java.util.concurrent.ExecutionException => throw e.getCause
    }
  }

  /** A new, configured instance of the provider class: loaded by the thread's class loader (Spark's,
    * which sees the application's jars), else the connector's.
    */
  def instantiate(c: Credentials.Provider): AuthTokenProvider = {
    val cls = loadClass(c)
    val instance =
      try cls.getConstructor().newInstance()
      catch {
        case e: NoSuchMethodException =>
          throw new TokenUnavailableException(c, s"token provider ${c.className} has no public no-argument constructor",
            e)
        case NonFatal(e) =>
          throw new TokenUnavailableException(
            c, s"token provider ${c.className} could not be made: ${e.getClass.getName}")
      }
    try instance.configure(c.options.asJava)
    catch {
      case NonFatal(e) =>
        throw new TokenUnavailableException(c,
          s"token provider ${c.className} refused its settings: ${e.getClass.getName}")
    }
    instance
  }

  /** The class, checked to implement [[AuthTokenProvider]]. */
  def loadClass(c: Credentials.Provider): Class[_ <: AuthTokenProvider] = {
    val loaders = Seq(Thread.currentThread().getContextClassLoader, classOf[AuthTokenProvider].getClassLoader)
      .filter(_ != null).distinct
    val cls = loaders.iterator.map(l => scala.util.Try(Class.forName(c.className, true, l)).toOption)
      .collectFirst { case Some(k) => k }
      .getOrElse(throw new TokenUnavailableException(c, s"token provider class ${c.className} is not on the classpath"))
    if (!classOf[AuthTokenProvider].isAssignableFrom(cls))
      throw new TokenUnavailableException(c,
        s"token provider class ${c.className} does not implement ${classOf[AuthTokenProvider].getName}")
    cls.asSubclass(classOf[AuthTokenProvider])
  }
}
