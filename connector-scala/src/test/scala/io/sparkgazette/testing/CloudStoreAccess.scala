package io.sparkgazette.testing

import java.io.FileInputStream
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths, StandardOpenOption}
import java.security.cert.{Certificate, CertificateFactory, X509Certificate}
import java.security.spec.PKCS8EncodedKeySpec
import java.security.{KeyFactory, KeyStore}
import java.util.Base64
import javax.net.ssl.{HttpsURLConnection, KeyManagerFactory, SSLContext, TrustManagerFactory, X509TrustManager}

/** How this JVM reaches a cloud store's emulator (tests/harness/cloud_stores.py) as the host that
  * the brokers' signed URLs name, for the tests only: the host resolves to the emulator's loopback
  * address through the test JVM's hosts file (`-Djdk.net.hosts.file`, which build.sbt sets), and
  * HTTPS trusts the emulator's CA beside the JDK's own.
  */
object CloudStoreAccess {
  final case class Emulator(host: String, address: String, ca: Path)

  private var cas = Vector.empty[X509Certificate]

  /** Makes `e.host` resolve to `e.address`, and its certificate trusted, in this JVM. */
  def resolve(e: Emulator): Unit = synchronized {
    cas :+= certificate(e.ca).asInstanceOf[X509Certificate]
    route(e.host, e.address)
  }

  /** Makes `host` resolve to `address` from now on, in this JVM: connections kept alive to the
    * address it resolved to before are not used again (they belong to the SSL socket factory
    * replaced here: the JDK keys its cache of idle connections by it).
    */
  def route(host: String, address: String): Unit = synchronized {
    val hosts = sys.props.get("jdk.net.hosts.file").map(Paths.get(_)).getOrElse(
      sys.error("the test JVM resolves no cloud store: it needs -Djdk.net.hosts.file (build.sbt sets it)"))
    val kept = new String(Files.readAllBytes(hosts), UTF_8).linesIterator.filterNot(_.endsWith(s" $host"))
    Files.write(hosts, (kept.mkString("\n") + s"\n$address $host\n").getBytes(UTF_8),
      StandardOpenOption.TRUNCATE_EXISTING)
    HttpsURLConnection.setDefaultSSLSocketFactory(context(cas).getSocketFactory)
  }

  /** An SSL context that serves as `e`'s emulator does: its certificate (for the cloud host) and
    * key, which the harness keeps beside the CA.
    */
  def serverContext(e: Emulator): SSLContext = {
    val dir = e.ca.getParent
    val pem = new String(Files.readAllBytes(dir.resolve("server.key")), UTF_8)
    val der = Base64.getMimeDecoder.decode(pem.linesIterator.filterNot(_.startsWith("-----")).mkString)
    val key = KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(der))
    val store = KeyStore.getInstance(KeyStore.getDefaultType)
    store.load(null, null)
    store.setKeyEntry("server", key, Array.emptyCharArray, Array(certificate(dir.resolve("server.pem"))))
    val kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm)
    kmf.init(store, Array.emptyCharArray)
    val ctx = SSLContext.getInstance("TLS")
    ctx.init(kmf.getKeyManagers, null, null)
    ctx
  }

  private def certificate(pem: Path): Certificate = {
    val in = new FileInputStream(pem.toFile)
    try CertificateFactory.getInstance("X.509").generateCertificate(in)
    finally in.close()
  }

  /** An SSL context that trusts `extra` as well as what the JDK trusts. */
  private def context(extra: Seq[X509Certificate]): SSLContext = {
    val jdk = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm)
    jdk.init(null: KeyStore)
    val store = KeyStore.getInstance(KeyStore.getDefaultType)
    store.load(null, null)
    jdk.getTrustManagers.collect { case t: X509TrustManager => t }.flatMap(_.getAcceptedIssuers).zipWithIndex
      .foreach { case (c, i) => store.setCertificateEntry(s"jdk-$i", c) }
    extra.zipWithIndex.foreach { case (c, i) => store.setCertificateEntry(s"test-store-$i", c) }
    val tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm)
    tmf.init(store)
    val ctx = SSLContext.getInstance("TLS")
    ctx.init(null, tmf.getTrustManagers, null)
    ctx
  }
}
