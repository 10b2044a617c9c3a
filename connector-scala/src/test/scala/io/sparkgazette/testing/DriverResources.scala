package io.sparkgazette.testing

import java.io.File
import java.util.logging.{Handler, Level, LogRecord, Logger}

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import io.sparkgazette.client.GazetteClient

/** What a JVM holds that leaks show in: open file descriptors (sockets included) and live
  * threads, less those of Spark's two block-manager pools, which start a thread per epoch
  * until they hold their 100 each.
  */
final case class DriverResources(fileDescriptors: Int, threads: Int, threadNames: String)

object DriverResources {
  private val boundedSparkPools = Seq("block-manager-ask-thread-pool", "block-manager-storage-async-thread-pool")

  /** After a full GC, so that what is left is what is still referenced. */
  def now(): DriverResources = {
    System.gc()
    System.runFinalization()
    val threads = Thread.getAllStackTraces.keySet().asScala.toSeq.map(_.getName)
      .filterNot(n => boundedSparkPools.exists(n.startsWith))
    // By name, digits left out, most numerous first: where a leak would show.
    val names = threads.map(_.replaceAll("[0-9]+", "N")).groupBy(identity).map { case (n, ts) => n -> ts.size }
      .toSeq.sortBy(-_._2).take(6).map { case (n, k) => s"$n: $k" }.mkString(", ")
    DriverResources(Option(new File("/proc/self/fd").list()).fold(-1)(_.length), threads.size, names)
  }
}

/** Collects gRPC's "was garbage collected without being shut down" reports: gRPC checks for
  * orphaned channels when it builds a new one, so [[reported]] collects garbage and builds one.
  */
final class OrphanedChannels private (logger: Logger) extends Handler {
  private val seen = mutable.Buffer[String]()

  override def publish(r: LogRecord): Unit =
    if (r.getLevel.intValue() >= Level.SEVERE.intValue() && String.valueOf(r.getMessage).contains("garbage collected"))
      seen.synchronized(seen += String.valueOf(r.getParameters match {
        case null => r.getMessage; case ps => ps.mkString(", ")
      }))

  override def flush(): Unit = ()
  override def close(): Unit = logger.removeHandler(this)

  /** The reports so far, after collecting garbage and building a channel to `broker`. */
  def reported(broker: String): Seq[String] = {
    System.gc()
    System.runFinalization()
    val probe = GazetteClient(broker)
    try probe.list("name=nothing/at/all")
    finally probe.close()
    seen.synchronized(seen.toList)
  }
}

object OrphanedChannels {
  // Held strongly: java.util.logging forgets loggers nobody references, and their handlers.
  private val logger = Logger.getLogger("io.grpc.internal.ManagedChannelOrphanWrapper")

  def watch(): OrphanedChannels = {
    val h = new OrphanedChannels(logger)
    logger.addHandler(h)
    h
  }
}
