package io.sparkgazette.spark
package options

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import io.sparkgazette.client.auth.{Credentials, Secret}
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.sink.config.SinkOptions
import io.sparkgazette.spark.source.offsets.SourceOptions
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.scalatest.funsuite.AnyFunSuite

/** Options that say how clients reach the brokers, shared by source and sink. */
class ConnectionOptionsSuite extends AnyFunSuite {
  private val source = Map("broker" -> "http://127.0.0.1:8080", "selector" -> "prefix=events/")
  private val sink =
    Map("broker" -> "http://127.0.0.1:8080", "journal" -> "out", "deliveryGuarantee" -> "at-least-once")
  private def read(kv: (String, String)*) =
    SourceOptions.parse(new CaseInsensitiveStringMap((source ++ kv).asJava), streaming = true)
  private def write(kv: (String, String)*) = SinkOptions.parse(sink ++ kv, streaming = true)

  test("rpcTimeout and retryTimeout reach the client's config on both sides; unset, the client's defaults stay") {
    val r = read("rpcTimeout" -> "5s", "RETRYTIMEOUT" -> "1m").clientConfig
    assert(r.rpcTimeout == 5.seconds && r.retryTimeout == 1.minute && r.brokers == Seq("http://127.0.0.1:8080"))
    val w = write("retryTimeout" -> "0").clientConfig
    assert(w.retryTimeout == Duration.Zero && w.rpcTimeout == 30.seconds)
    assert(read().clientConfig.retryTimeout == 2.minutes)
    assert(read("fragmentRoot" -> "/frags").clientConfig.fragmentRoot.contains("/frags"))
  }

  test("bad timeouts fail naming the option") {
    val e1 = intercept[IllegalArgumentException](read("rpcTimeout" -> "0s")).getMessage
    assert(e1.contains("'rpcTimeout' has invalid value '0s'"))
    val e2 = intercept[IllegalArgumentException](write("retryTimeout" -> "soon")).getMessage
    assert(e2.contains("'retryTimeout' has invalid value 'soon'"))
  }
}

/** TLS and bearer token options; the brokers they reach are in tests/test_security.py. */
class SecurityOptionsSuite extends AnyFunSuite {
  private val tlsSource = Map("broker" -> "https://127.0.0.1:8443", "selector" -> "prefix=events/")
  private def read(kv: (String, String)*) =
    SourceOptions.parse(new CaseInsensitiveStringMap((tlsSource ++ kv).asJava), streaming = true)

  test("TLS files and the token reach the client's config; the token never prints") {
    val c = read("trustedCaFile" -> "/ca.pem", "certFile" -> "/c.pem", "certKeyFile" -> "/k.pem",
      "authToken" -> "s3cr3t.jwt.sig").clientConfig
    assert(c.tls == io.sparkgazette.client.Tls(Some("/ca.pem"), Some("/c.pem"), Some("/k.pem")))
    assert(c.credentials == Credentials.Fixed(new Secret("s3cr3t.jwt.sig")))
    assert(!c.toString.contains("s3cr3t") && !read("authToken" -> "s3cr3t.jwt.sig").toString.contains("s3cr3t"))
    assert(GazetteErrors.describe(Map("AUTHTOKEN" -> "s3cr3t", "broker" -> "b")) ==
      "AUTHTOKEN=*********(redacted), broker=b")
  }

  test(
    "a certificate without its key, TLS to an http endpoint and a bad token fail, naming the option and not the token") {
    assert(
      intercept[IllegalArgumentException](read("certFile" -> "/c.pem")).getMessage contains "'certKeyFile' is required")
    val plain = intercept[IllegalArgumentException](SourceOptions.parse(new CaseInsensitiveStringMap(
          Map("broker" -> "http://b:1", "journals" -> "j", "trustedCaFile" -> "/ca.pem").asJava),
        streaming = true)).getMessage
    assert(plain.contains("'broker'") && plain.contains("https://"))
    val bad = intercept[IllegalArgumentException](read("authToken" -> "s3cr3t with spaces")).getMessage
    assert(bad.contains("'authToken'") && !bad.contains("s3cr3t"))
  }

  test("a token file and a provider reach the client's config; the provider's settings never print") {
    val file = java.nio.file.Files.createTempFile("token", "")
    assert(read("authTokenFile" -> file.toString).clientConfig.credentials == Credentials.File(file.toString))
    val c = read("AUTHTOKENPROVIDER" -> classOf[FixedTokenProvider].getName,
      "authTokenProvider.clientSecret" -> "s3cr3t").clientConfig
    c.credentials match {
      case Credentials.Provider(cls, options) =>
        assert(cls == classOf[FixedTokenProvider].getName)
        assert(options == Map("authTokenProvider.clientSecret" -> "s3cr3t")) // its own settings, no other option
      case other => fail(s"credentials $other")
    }
    assert(!c.toString.contains("s3cr3t"))
    assert(GazetteErrors.describe(Map("authTokenProvider.clientSecret" -> "s3cr3t")) ==
      "authTokenProvider.clientSecret=*********(redacted)")
  }

  test("reads that differ only in their offsets share the JVM's client, with a provider as with a token") {
    // Executors keep one client (its channels, its provider) per configuration for the JVM's life:
    // a configuration that holds every option of the query makes one more per batch job's offsets.
    val fixed = Seq("authToken" -> "a.b.c")
    val provider = Seq("authTokenProvider" -> classOf[FixedTokenProvider].getName, "authTokenProvider.role" -> "r")
    def clients(connection: Seq[(String, String)]) = Seq("earliest", "latest").map(from =>
      io.sparkgazette.spark.clients.ClientCache(read(connection :+ ("startingOffsets" -> from): _*).clientConfig))
    val Seq(fixedA, fixedB) = clients(fixed)
    assert(fixedA eq fixedB)
    val Seq(providerA, providerB) = clients(provider)
    assert(providerA eq providerB, "two clients (two providers, two sets of channels) for one connection")
  }

  test("two sources of tokens conflict, naming both; a missing file or a class that is no provider is refused") {
    val file = java.nio.file.Files.createTempFile("token", "").toString
    val both = intercept[IllegalArgumentException](read("authToken" -> "a.b.c", "authTokenFile" -> file))
    assert(both.getMessage.contains("'authToken' and 'authTokenFile' cannot be used together"), both.getMessage)
    val three = intercept[IllegalArgumentException](
      read("authTokenFile" -> file, "authTokenProvider" -> classOf[FixedTokenProvider].getName)).getMessage
    assert(three.contains("'authTokenFile' and 'authTokenProvider'"), three)
    val missing = intercept[IllegalArgumentException](read("authTokenFile" -> "/no/such/token")).getMessage
    assert(missing.contains("'authTokenFile' has invalid value '/no/such/token'"), missing)
    val notOne = intercept[IllegalArgumentException](read("authTokenProvider" -> "java.lang.String")).getMessage
    assert(notOne.contains("'authTokenProvider'") && notOne.contains("does not implement"), notOne)
    val absent = intercept[IllegalArgumentException](read("authTokenProvider" -> "no.such.Provider")).getMessage
    assert(absent.contains("not on the classpath"), absent)
  }
}

/** A provider for the options' tests: always the same token. */
class FixedTokenProvider extends io.sparkgazette.client.auth.AuthTokenProvider {
  override def token(refused: Boolean): String = "a.b.c"
}
