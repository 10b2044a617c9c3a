package io.sparkgazette.client

import java.io.File

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext

/** TLS to `https://` brokers, as Gazette's own clients take it (`--broker.trusted-ca-file`,
  * `--broker.cert-file`, `--broker.cert-key-file`): a CA to trust instead of the JVM's, and a
  * client certificate with its PKCS#8 PEM key for brokers that require one (mutual TLS).
  */
final case class Tls(trustedCaFile: Option[String] = None, certFile: Option[String] = None,
    certKeyFile: Option[String] = None) {
  require(certFile.isDefined == certKeyFile.isDefined, "a client certificate and its key go together")

  def sslContext: SslContext = {
    val b = GrpcSslContexts.forClient()
    trustedCaFile.foreach(f => b.trustManager(readable(f)))
    for (cert <- certFile; key <- certKeyFile) b.keyManager(readable(cert), readable(key))
    b.build()
  }

  private def readable(path: String): File = {
    val f = new File(path)
    if (!f.canRead) throw new GazetteException(s"TLS file $path cannot be read on this host")
    f
  }
}
