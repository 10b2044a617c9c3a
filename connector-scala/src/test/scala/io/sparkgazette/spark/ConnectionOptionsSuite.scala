package io.sparkgazette.spark

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

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
    assert(c.authToken.map(_.value).contains("s3cr3t.jwt.sig"))
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
}
