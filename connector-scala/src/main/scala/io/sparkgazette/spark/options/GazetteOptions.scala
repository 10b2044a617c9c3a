package io.sparkgazette.spark
package options

import java.util.Locale

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._
import scala.util.Try

import io.sparkgazette.client.auth.{Credentials, ProviderTokens, Secret, TokenUnavailableException}
import io.sparkgazette.client.{ClientConfig, Tls}
import io.sparkgazette.message.{Framing, JsonPointerScanner}
import io.sparkgazette.spark.errors.GazetteErrors
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** The connector's options: their declaration ([[GazetteOptions.reference]], read from
  * `options.json`: name, side, type, default and doc, from which the constants of [[OptionNames]],
  * the Python helpers' keywords and `docs/options.md` are generated), and the parsing shared by the
  * source (`SourceOptions`) and the sink (`SinkOptions`). A name the declaration does not list is
  * refused, so an option cannot exist undocumented; Spark's own options are declared there too,
  * and pass on the sides Spark hands them to.
  */
private[spark] object GazetteOptions extends OptionNames {

  /** Options named `authTokenProvider.<setting>` are the token provider's own: accepted as they
    * are, handed to it, shown redacted.
    */
  private[options] val ProviderPrefix = AuthTokenProvider + "."

  /** Options under this prefix are the tests' hooks (faults injected at chosen points of a
    * protocol): accepted, never documented, never listed to users.
    */
  private[options] val TestPrefix = "test."
  private[spark] val TestSinkFault = "test.sinkFault"

  val DefaultBytesPerPartition: Long = 16L << 20

  /** The last millisecond a v1 UUID's clock (100 ns ticks since 1582, shifted by 4 bits in a long) can hold. */
  val MaxEpochMillis: Long = 45426782430342L

  /** The options reference: each option of each side once, as `docs/options.md` shows it. */
  private[options] def reference: Seq[OptionDoc] = OptionDoc.all

  private def names(side: OptionDoc.Side): Seq[String] =
    reference.filter(d => d.side == side || d.side == OptionDoc.Connection && side != OptionDoc.Connection)
      .map(_.name).distinct

  private[options] val parsingNames: Seq[String] = reference.filter(_.side == OptionDoc.Parsing).map(_.name)
  private[spark] val sourceNames: Seq[String] = names(OptionDoc.Source) ++ parsingNames
  private[spark] val sinkNames: Seq[String] = names(OptionDoc.Sink)
  private[options] val connectionNames: Seq[String] = reference.filter(_.side == OptionDoc.Connection).map(_.name)

  /** Spark's own options that Spark hands the source, the sink, or either. A writer's options are
    * the query's options and also the sink's; a reader's are the source's only, and Spark reads none
    * of them. `path`, which `load(path)`, `start(path)` and `save(path)` set, names the sink's journal
    * and is no option of the source, which refuses it.
    */
  private def sparkNames(side: OptionDoc.Side => Boolean): Seq[String] =
    reference.filter(d => d.side == OptionDoc.Spark && d.givenTo.exists(side)).map(_.name)
  private[spark] val sparkSourceNames: Seq[String] = sparkNames(_ == OptionDoc.Source)
  private[spark] val sparkSinkNames: Seq[String] = sparkNames(_ == OptionDoc.Sink)
  private[spark] val sparkAllNames: Seq[String] = sparkNames(_ => true)

  /** The parsing options among `options`, for Spark's JSON and CSV parsers. */
  private[spark] def parsing(options: CaseInsensitiveStringMap): Map[String, String] = {
    val wanted = parsingNames.map(_.toLowerCase(Locale.ROOT)).toSet
    options.asCaseSensitiveMap().asScala.toMap.filter { case (k, _) => wanted(k.toLowerCase(Locale.ROOT)) }
  }

  /** A client's config from `broker` and the connection options alone (the admin helpers'). */
  def connectionConfig(options: Map[String, String]): ClientConfig = {
    val o = new Reader(options, Broker +: connectionNames, sparks = Nil)
    connection(o).config(broker(o))
  }

  private[spark] def broker(o: Reader): String = {
    val b = o.get(Broker).getOrElse(throw GazetteErrors.missingOption(Broker,
        "the broker address, e.g. http://127.0.0.1:8080"))
    Try(ClientConfig(b)).failed.foreach(e => throw GazetteErrors.invalidOption(Broker, b, e.getMessage))
    b
  }

  private[spark] def connection(o: Reader): BrokerConnection = BrokerConnection(
    rpcTimeout = o.get(RpcTimeout).map { v =>
      val d = duration(RpcTimeout, v)
      if (d.toMillis <= 0) throw GazetteErrors.invalidOption(RpcTimeout, v, "a duration above zero, such as 30s")
      d
    },
    retryTimeout = o.get(RetryTimeout).map(duration(RetryTimeout, _)),
    tls = tls(o),
    credentials = credentials(o)
  )

  /** At most one of `authToken`, `authTokenFile` and `authTokenProvider`, checked where the query is
    * defined: the driver must read the file and load the class (executors, alike, must too).
    */
  private def credentials(o: Reader): Credentials = {
    Seq(AuthToken, AuthTokenFile, AuthTokenProvider).filter(o.get(_).isDefined) match {
      case Seq(a, b, _*) => throw GazetteErrors.conflictingOptions(a, b)
      case _ =>
    }
    val token = o.get(AuthToken).map { t =>
      if (t.trim.isEmpty || t.exists(_.isWhitespace))
        throw GazetteErrors.invalidSecret(AuthToken, "a JWT without spaces")
      Credentials.Fixed(new Secret(t))
    }
    val file = o.get(AuthTokenFile).map { path =>
      if (!java.nio.file.Files.isReadable(java.nio.file.Paths.get(path)))
        throw GazetteErrors.invalidOption(AuthTokenFile, path,
          "a readable file holding the bearer token, at this path on the driver and every executor")
      Credentials.File(path)
    }
    val provider = o.get(AuthTokenProvider).map { name =>
      // Its own settings only: the provider's instance and the client holding it are shared by every
      // read and write with the same ones in a JVM, whatever their offsets or journals.
      val p = Credentials.Provider(name.trim,
        o.all.filter { case (k, _) =>
          k.regionMatches(true, 0, AuthTokenProvider + ".", 0, AuthTokenProvider.length + 1)
        })
      try ProviderTokens.loadClass(p)
      catch {
        case e: TokenUnavailableException => throw GazetteErrors.invalidOption(AuthTokenProvider, name,
            s"a class implementing io.sparkgazette.client.auth.AuthTokenProvider (${e.getMessage})")
      }
      p
    }
    token.orElse(file).orElse(provider).getOrElse(Credentials.Anonymous)
  }

  private def tls(o: Reader): Tls = {
    if (o.get(CertFile).isDefined != o.get(CertKeyFile).isDefined)
      throw GazetteErrors.missingOption(if (o.get(CertFile).isDefined) CertKeyFile else CertFile,
        s"$CertFile and $CertKeyFile go together (a client certificate and its PKCS#8 PEM key)")
    val tls = Tls(o.get(TrustedCaFile), o.get(CertFile), o.get(CertKeyFile))
    val plain =
      o.get(Broker).toSeq.flatMap(_.split(',')).map(_.trim).filter(b => b.nonEmpty && !b.startsWith("https://"))
    if (tls != Tls() && plain.nonEmpty)
      throw GazetteErrors.invalidOption(
        Broker, o.get(Broker).get, s"https:// endpoints: TLS options are set, and ${plain.mkString(", ")} is not TLS")
    tls
  }

  private[spark] def uuidPointer(o: Reader): String = {
    val p = o.get(UuidPointer).getOrElse(Framing.DefaultUuidPointer)
    Try(new JsonPointerScanner(p)).failed.foreach(_ =>
      throw GazetteErrors.invalidOption(UuidPointer, p, "a JSON pointer such as /_meta/uuid"))
    if (p.isEmpty) throw GazetteErrors.invalidOption(UuidPointer, p, "a JSON pointer such as /_meta/uuid")
    p
  }

  private[spark] def uuidField(o: Reader): Int =
    o.get(UuidField).map { v =>
      Try(v.toInt).toOption.filter(n => n >= 1 && n <= (1 << 29) - 1)
        .getOrElse(throw GazetteErrors.invalidOption(UuidField, v, "a protobuf field number from 1 to 536870911"))
    }.getOrElse(Framing.DefaultUuidField)

  private[spark] def positiveLong(option: String, value: String): Long =
    Try(value.trim.toLong).toOption.filter(_ > 0).getOrElse(throw GazetteErrors.invalidOption(option, value,
        "a positive whole number"))

  private[spark] def nonNegativeInt(option: String, value: String): Int =
    Try(value.trim.toInt).toOption.filter(_ >= 0).getOrElse(throw GazetteErrors.invalidOption(option, value,
        "a whole number >= 0"))

  /** `250ms`, `30s`, `15m`, `24h`, `7d`, or a number of milliseconds. */
  private[spark] def duration(option: String, value: String): FiniteDuration = {
    val m = """(?i)\s*(\d+)\s*(ms|s|m|min|h|d)?\s*""".r
    value match {
      case m(n, unit) =>
        val amount = n.toLong
        Option(unit).map(_.toLowerCase(Locale.ROOT)).getOrElse("ms") match {
          case "ms" => amount.millis
          case "s" => amount.seconds
          case "m" | "min" => amount.minutes
          case "h" => amount.hours
          case _ => amount.days
        }
      case _ => throw GazetteErrors.invalidOption(option, value, "a duration such as 250ms, 30s, 15m, 24h or 7d")
    }
  }

  /** Option values by case-insensitive name, refusing names outside `known`. Spark's own options
    * that Spark hands this side (`sparks`) are not the connector's to check, and the tests' hooks
    * pass as they are. A name refused is likely a misspelling of one of either.
    */
  private[spark] final class Reader(options: Map[String, String], known: Seq[String], sparks: Seq[String]) {
    private val byLower = known.map(k => k.toLowerCase(Locale.ROOT) -> k).toMap
    private val values: Map[String, String] = options.flatMap { case (k, v) =>
      val lower = k.toLowerCase(Locale.ROOT)
      byLower.get(lower) match {
        case Some(name) => Some(name -> v)
        case None if lower.startsWith(TestPrefix) => Some(k -> v)
        case None if lower.startsWith(ProviderPrefix.toLowerCase(Locale.ROOT)) =>
          Some(ProviderPrefix + k.substring(ProviderPrefix.length) -> v)
        // Spark reads its own options from a query's options only: a session default of one would
        // do nothing.
        case None if sparks.exists(_.equalsIgnoreCase(k)) && SessionDefaults().contains(lower) =>
          throw GazetteErrors.unknownSessionOption(k, SessionDefaults.Prefix + k, known)
        case None if sparks.exists(_.equalsIgnoreCase(k)) => None
        // A session-wide default for the other side (a sink's option while reading) is not this query's.
        case None if allNames.exists(_.equalsIgnoreCase(k)) && SessionDefaults().get(lower).contains(v) => None
        case None if SessionDefaults().contains(lower) =>
          throw GazetteErrors.unknownSessionOption(k, SessionDefaults.Prefix + k, known)
        case None => throw GazetteErrors.unknownOption(k, known, sparks)
      }
    }

    /** Every option accepted, by its documented name. */
    def all: Map[String, String] = values

    def get(name: String): Option[String] =
      if (name.startsWith(TestPrefix)) values.collectFirst { case (k, v) if k.equalsIgnoreCase(name) => v }
      else values.get(name)

    def boolean(name: String, default: Boolean): Boolean = values.get(name).map { v =>
      v.trim.toLowerCase(Locale.ROOT) match {
        case "true" => true
        case "false" => false
        case _ => throw GazetteErrors.invalidOption(name, v, "true or false")
      }
    }.getOrElse(default)
  }

  private[spark] lazy val allNames: Seq[String] = (sourceNames ++ sinkNames).distinct
}
