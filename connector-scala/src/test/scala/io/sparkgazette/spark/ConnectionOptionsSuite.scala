package io.sparkgazette.spark

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.scalatest.funsuite.AnyFunSuite

/** Options that say how clients reach the brokers, shared by source and sink. */
class ConnectionOptionsSuite extends AnyFunSuite {
  private val source = Map("broker" -> "http://127.0.0.1:8080", "selector" -> "prefix=events/")
  private val sink = Map("broker" -> "http://127.0.0.1:8080", "journal" -> "out", "deliveryGuarantee" -> "at-least-once")
  private def read(kv: (String, String)*) = GazetteOptions.source(new CaseInsensitiveStringMap((source ++ kv).asJava), streaming = true)
  private def write(kv: (String, String)*) = GazetteOptions.sink(sink ++ kv, streaming = true)

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
