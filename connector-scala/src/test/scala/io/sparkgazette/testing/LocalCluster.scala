package io.sparkgazette.testing

import java.net.URI
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths}
import java.security.MessageDigest
import java.time.format.DateTimeFormatter
import java.time.{ZoneOffset, ZonedDateTime}
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

import scala.jdk.CollectionConverters._
import scala.sys.process._

/** A local Gazette cluster (etcd + brokers on loopback) run by the project's harness,
  * `tests/harness/cluster.py`, so that Scala and Python suites share one way of starting it.
  * The harness tears the cluster down when this JVM exits, however it exits. A cluster started
  * with `store = "s3"` also runs an S3 server for the journals that name it ([[storeUrl]]): MinIO,
  * which checks every request's signature; `store = "gofakes3"` runs gofakes3, which checks none.
  * `store = "gcs"` and `store = "azure"` run an emulator (fake-gcs-server, Azurite) that brokers and
  * tasks reach as the cloud host their signed URLs name: [[CloudStoreAccess]].
  */
final class LocalCluster private (dir: Path, env: Map[String, String]) extends AutoCloseable {

  /** Every broker's endpoint, in harness order. */
  val brokers: Seq[String] = env("GAZETTE_BROKERS").split(',').toSeq

  /** The first broker's endpoint. */
  def broker: String = brokers.head

  /** The directory the brokers' `file:///` fragment stores map to. */
  val fragmentRoot: String = env("GAZETTE_FRAGMENT_ROOT")

  /** The S3 server's endpoint, `http://127.0.0.1:PORT`, in an `s3` (or `gofakes3`) cluster. */
  val s3Endpoint: Option[String] = env.get("GAZETTE_S3_ENDPOINT")

  /** The keys of the S3 server's bucket under `prefix` (one ListObjectsV2 page: up to 1,000). */
  def s3Keys(prefix: String = ""): Seq[String] = {
    val r = s3("GET", s"/gazette?list-type=2&prefix=${LocalCluster.encode(prefix)}")
    require(r.statusCode == 200, s"ListObjectsV2 answered ${r.statusCode}: ${r.body}")
    "<Key>([^<]*)</Key>".r.findAllMatchIn(r.body).map(_.group(1)).toSeq
  }

  /** Deletes the object `key` of the S3 server's bucket. */
  def deleteS3Object(key: String): Unit = {
    val r = s3("DELETE", "/gazette/" + key.split('/').map(LocalCluster.encode).mkString("/"))
    require(r.statusCode / 100 == 2, s"DeleteObject answered ${r.statusCode}: ${r.body}")
  }

  /** A bodiless request to the S3 server, signed (AWS Signature Version 4, in the Authorization
    * header) with the brokers' credentials. `pathAndQuery` is encoded as SigV4's canonical
    * request has it, its query sorted.
    */
  private def s3(method: String, pathAndQuery: String): HttpResponse[String] = {
    val uri = URI.create(s3Endpoint.getOrElse(sys.error("this cluster has no S3 server")) + pathAndQuery)
    val now = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'"))
    val payload = LocalCluster.hex(MessageDigest.getInstance("SHA-256").digest(Array.emptyByteArray))
    val headers = Seq("host" -> uri.getRawAuthority, "x-amz-content-sha256" -> payload, "x-amz-date" -> now)
    val signed = headers.map(_._1).mkString(";")
    val canonical =
      (Seq(method, uri.getRawPath, Option(uri.getRawQuery).getOrElse("")) ++
        headers.map { case (k, v) => s"$k:$v" } ++ Seq("", signed, payload)).mkString("\n")
    val scope = s"${now.take(8)}/${env("GAZETTE_S3_REGION")}/s3/aws4_request"
    val digest = LocalCluster.hex(MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(UTF_8)))
    def hmac(key: Array[Byte], data: String) = {
      val mac = Mac.getInstance("HmacSHA256")
      mac.init(new SecretKeySpec(key, "HmacSHA256"))
      mac.doFinal(data.getBytes(UTF_8))
    }
    val key = scope.split('/').foldLeft(("AWS4" + env("GAZETTE_S3_SECRET_ACCESS_KEY")).getBytes(UTF_8))(hmac)
    val signature = LocalCluster.hex(hmac(key, s"AWS4-HMAC-SHA256\n$now\n$scope\n$digest"))
    val request = HttpRequest.newBuilder(uri).method(method, HttpRequest.BodyPublishers.noBody())
      .header("x-amz-content-sha256", payload).header("x-amz-date", now)
      .header("Authorization",
        s"AWS4-HMAC-SHA256 Credential=${env("GAZETTE_S3_ACCESS_KEY_ID")}/$scope, " +
          s"SignedHeaders=$signed, Signature=$signature")
    LocalCluster.http.send(request.build(), HttpResponse.BodyHandlers.ofString())
  }

  /** The fragment store for journal specs: `file:///PREFIX` under [[fragmentRoot]], or in an `s3`
    * cluster `s3://gazette/PREFIX?endpoint=...&region=us-east-1` on its S3 server. `prefix` is ""
    * or ends in "/".
    */
  def storeUrl(prefix: String = ""): String = {
    require(prefix.isEmpty || prefix.endsWith("/"), s"a store prefix ends in '/': '$prefix'")
    (env.get("GAZETTE_S3_STORE"), env.get("GAZETTE_STORE_URL")) match {
      case (Some(s3), _) => s3.patch(s3.indexOf('?'), prefix, 0) // s3://gazette/?endpoint=...
      case (None, Some(cloud)) => cloud + prefix // gs://gazette/, azure://gazette/
      case _ => "file:///" + prefix
    }
  }

  /** A `gcs` or `azure` cluster's emulator: the cloud host its signed URLs name, the loopback
    * address it serves that host on, and the CA of its certificate.
    */
  val cloudStore: Option[CloudStoreAccess.Emulator] = env.get("GAZETTE_STORE_HOST").map(host =>
    CloudStoreAccess.Emulator(host, env("GAZETTE_STORE_ADDRESS"), Paths.get(env("GAZETTE_STORE_CA"))))

  /** The names of the store's objects under `prefix`, S3's or a cloud store's. */
  def storeKeys(prefix: String = ""): Seq[String] =
    if (s3Endpoint.nonEmpty) s3Keys(prefix)
    else LocalCluster.harnessOutput(dir, "store-keys", prefix).linesIterator.filter(_.nonEmpty).toSeq

  /** Deletes the store's object `key`. */
  def deleteStoreObject(key: String): Unit =
    if (s3Endpoint.nonEmpty) deleteS3Object(key) else LocalCluster.harness(dir, "delete-store-object", key)

  /** The first broker's process id (its CPU time is what a read costs it). */
  def brokerPid: Long = {
    val state = new String(Files.readAllBytes(dir.resolve("state.json")), UTF_8)
    "\"pid\": (\\d+)".r.findFirstMatchIn(state.substring(state.indexOf("\"brokers\""))).get.group(1).toLong
  }

  def stopBroker(index: Int): Unit = LocalCluster.harness(dir, "stop-broker", index.toString)
  def startBroker(index: Int): Unit = LocalCluster.harness(dir, "start-broker", index.toString)

  /** Kills the S3 server of an `s3` (`gofakes3`) cluster (as a crash), which then refuses connections. */
  def stopStore(): Unit = LocalCluster.harness(dir, "stop-store")

  /** Starts the S3 server again on its port, with the objects it held. */
  def startStore(): Unit = LocalCluster.harness(dir, "start-store")

  /** An `azure` cluster's store takes an account key other than the brokers' (a key rotated under
    * them): it refuses their requests and signed URLs with HTTP 403, until [[restoreStoreKey]].
    */
  def revokeStoreKey(): Unit = LocalCluster.harness(dir, "revoke-store-key")
  def restoreStoreKey(): Unit = LocalCluster.harness(dir, "restore-store-key")

  override def close(): Unit = LocalCluster.harness(dir, "down")
}

object LocalCluster {
  private val root = Paths.get(sys.props.getOrElse("sparkgazette.root", "."))
  private lazy val http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()

  private def hex(bytes: Array[Byte]): String = bytes.map(b => f"${b & 0xff}%02x").mkString

  /** A URI component as SigV4 encodes it: every byte but `A-Za-z0-9-_.~` percent-encoded. */
  private def encode(s: String): String =
    java.net.URLEncoder.encode(s, UTF_8).replace("+", "%20").replace("*", "%2A").replace("%7E", "~")

  /** Starts `brokers` brokers and applies the journal `specs` (gazctl YAML files, relative to
    * the project root). `store = "s3"` also starts an S3 server for fragments ([[storeUrl]]),
    * MinIO; `store = "gofakes3"` runs gofakes3, which starts at once and checks no signature.
    */
  def start(brokers: Int = 1, specs: Seq[String] = Nil, store: String = "file"): LocalCluster = {
    require(Set("file", "s3", "gofakes3", "gcs", "azure")(store),
      s"store is 'file', 's3', 'gofakes3', 'gcs' or 'azure', not '$store'")
    val dir = Files.createTempDirectory("gazette-cluster-state")
    val specArgs = specs.flatMap(s => Seq("--specs", root.resolve(s).toString))
    val owner = ProcessHandle.current().pid().toString
    harness(dir, Seq("up", "--brokers", brokers.toString, "--store", store, "--owner-pid", owner) ++ specArgs: _*)
    val env = Files.readAllLines(dir.resolve("env")).asScala.collect {
      case line if line.contains('=') => line.takeWhile(_ != '=') -> line.dropWhile(_ != '=').drop(1)
    }.toMap
    val cluster = new LocalCluster(dir, env)
    cluster.cloudStore.foreach(CloudStoreAccess.resolve)
    cluster
  }

  private def harness(dir: Path, args: String*): Unit = { harnessOutput(dir, args: _*); () }

  private def harnessOutput(dir: Path, args: String*): String = {
    val venv = root.resolve(".venv/bin/python")
    val python = if (Files.isExecutable(venv)) venv.toString else "python3"
    val out, err = new StringBuilder
    val cmd = Seq(python, root.resolve("tests/harness/cluster.py").toString, "--dir", dir.toString) ++ args
    val code = cmd ! ProcessLogger(l => out.append(l).append('\n'), l => err.append(l).append('\n'))
    if (code != 0) throw new IllegalStateException(s"${cmd.mkString(" ")} failed ($code):\n$out$err")
    out.toString
  }
}
