package io.sparkgazette.client.auth

import java.nio.charset.StandardCharsets
import java.time.Instant
import java.util.Base64

import scala.util.Try

/** Where a client's bearer tokens come from. Serializable and compared by value: executors are
  * sent the description and make their own [[TokenSource]] of it, one per JVM.
  */
sealed trait Credentials extends Serializable

object Credentials {

  /** No token: brokers started without `--broker.auth-keys`. */
  case object Anonymous extends Credentials

  /** One token for the client's whole life. */
  final case class Fixed(token: Secret) extends Credentials

  /** The token a file holds, read again when the file changes (a control plane rewrites it). */
  final case class File(path: String) extends Credentials

  /** Tokens an [[AuthTokenProvider]] of class `className` hands out, configured with `options`
    * (which may hold its secrets: they are never shown).
    */
  final case class Provider(className: String, options: Map[String, String]) extends Credentials {
    override def toString: String = s"Provider($className, ${options.size} options redacted)"
  }
}

/** A bearer token as sent, and its expiry as its JWT claims say (read, not verified: the brokers
  * verify). Its string form never shows the token.
  */
final class Token(val value: String) {
  lazy val expiry: Option[Instant] = Token.expiry(value)

  def expired(now: Instant): Boolean = expiry.exists(!_.isAfter(now))

  override def toString: String = s"Token(redacted${expiry.fold("")(e => s", exp $e")})"
  override def equals(other: Any): Boolean = other match {
    case t: Token => t.value == value
    case _ => false
  }
  override def hashCode: Int = value.hashCode
}

object Token {
  private val Seconds = "(-?\\d+)(?:\\.\\d*)?".r

  /** The `exp` claim (seconds since 1970) of a JWT `header.payload.signature`, if it has one. */
  def expiry(jwt: String): Option[Instant] = {
    val parts = jwt.split('.')
    if (parts.length != 3) None
    else
      Try(new String(Base64.getUrlDecoder.decode(parts(1).replace("=", "")), StandardCharsets.UTF_8)).toOption
        .flatMap(topLevel(_, "exp")).flatMap {
          case Seconds(whole) => Try(Instant.ofEpochSecond(whole.toLong)).toOption
          case _ => None
        }
  }

  /** The text of the member `key` of the JSON object `json`, at its top level only (a nested claim
    * may have a member of the same name), up to the next `,` or `}` outside strings.
    */
  private def topLevel(json: String, key: String): Option[String] = {
    var depth = 0
    var i = 0
    var lastString: String = null
    var valueFrom = -1
    while (i < json.length) {
      json.charAt(i) match {
        case '"' =>
          val start = i + 1
          i += 1
          while (i < json.length && json.charAt(i) != '"') i += (if (json.charAt(i) == '\\') 2 else 1)
          lastString = json.substring(start, math.min(i, json.length))
        case ':' if depth == 1 =>
          if (lastString == key) valueFrom = i + 1
        case ',' | '}' if depth == 1 && valueFrom >= 0 =>
          return Some(json.substring(valueFrom, i).trim)
        case '{' | '[' => depth += 1
        case '}' | ']' => depth -= 1
        case _ =>
      }
      i += 1
    }
    None
  }
}

/** No token could be had from `credentials`: the file cannot be read, or the provider failed. */
final class TokenUnavailableException(val credentials: Credentials, reason: String, cause: Throwable = null)
    extends RuntimeException(reason, cause)
