package io.sparkgazette.testing

import java.io.FileInputStream
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths, StandardOpenOption}
import java.security.KeyStore
import java.security.cert.{CertificateFactory, X509Certificate}
import javax.net.ssl.{HttpsURLConnection, SSLContext, TrustManagerFactory, X509TrustManager}

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
    val hosts = sys.props.get("jdk.net.hosts.file").map(Paths.get(_)).getOrElse(
      sys.error("the test JVM resolves no cloud store: it needs -Djdk.net.hosts.file (build.sbt sets it)"))
    val kept = new String(Files.readAllBytes(hosts), UTF_8).linesIterator.filterNot(_.endsWith(s" ${e.host}"))
    Files.write(hosts, (kept.mkString("\n") + s"\n${e.address} ${e.host}\n").getBytes(UTF_8),
      StandardOpenOption.TRUNCATE_EXISTING)
    val in = new FileInputStream(e.ca.toFile)
    try cas :+= CertificateFactory.getInstance("X.509").generateCertificate(in).asInstanceOf[X509Certificate]
    finally in.close()
    HttpsURLConnection.setDefaultSSLSocketFactory(context(cas).getSocketFactory)
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
