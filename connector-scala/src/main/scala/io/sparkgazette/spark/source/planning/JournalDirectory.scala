package io.sparkgazette.spark
package source
package planning

import java.util.concurrent.{Executors, ThreadFactory}

import scala.concurrent.duration.Duration
import scala.concurrent.{Await, ExecutionContext, Future}

import io.sparkgazette.client.GazetteClient
import io.sparkgazette.message.Framing
import io.sparkgazette.spark.errors.GazetteErrors
import io.sparkgazette.spark.options.GazetteOptions
import io.sparkgazette.spark.source.offsets.{JournalTarget, SourceOptions}

/** The driver's only view of the cluster: which journals a query reads, their write heads and
  * their first readable offsets, asked concurrently.
  */
private[spark] final class JournalDirectory(client: GazetteClient, target: JournalTarget) extends AutoCloseable {
  private val pool = Executors.newFixedThreadPool(8,
    new ThreadFactory {
      override def newThread(r: Runnable): Thread = {
        val t = new Thread(r, "gazette-journal-directory")
        t.setDaemon(true)
        t
      }
    })
  private implicit val ec: ExecutionContext = ExecutionContext.fromExecutor(pool)

  /** The journals the target names now, by name; with `mustExist`, a named journal that does not
    * exist is an error (when a query starts), else it is left out, as a vanished journal is.
    */
  def journals(mustExist: Boolean = false): Map[String, JournalInfo] = target match {
    case JournalTarget.BySelector(s) => client.list(s).map(info).map(i => i.name -> i).toMap
    case JournalTarget.ByName(names) =>
      parallel(names) { n =>
        val found = client.list(s"name=$n").headOption.map(info)
        if (found.isEmpty && mustExist) throw GazetteErrors.unknownJournal(n, GazetteOptions.Journals)
        found
      }.flatten.map(i => i.name -> i).toMap
  }

  /** Each journal's write head, asked of all journals at once (one metadata Read each, in flight together). */
  def writeHeads(journals: Iterable[String]): Map[String, Long] = client.writeHeads(journals.toSeq)

  /** The first offset each journal still holds. */
  def earliest(journals: Iterable[String]): Map[String, Long] = client.readableFromAll(journals.toSeq, 0)

  /** Where each journal reaches its time (see [[OffsetsForTimes]]), searched concurrently. */
  def offsetsForTimes(times: Map[JournalInfo, Long], options: SourceOptions): Map[String, OffsetsForTimes.Found] =
    parallel(times.toSeq) { case (info, t) =>
      val framing = Framing.forContentType(info.contentType, options.uuidPointer, options.uuidField)
        .fold(problem => throw GazetteErrors.unsupportedFraming(info.name, problem), identity)
      info.name -> OffsetsForTimes.find(
        client, info.name, framing, t, options.maxMessageBytes)
    }.toMap

  private def parallel[A, B](items: Seq[A])(f: A => B): Seq[B] =
    Await.result(Future.traverse(items)(a => Future(f(a))), Duration.Inf)

  private def info(j: io.sparkgazette.client.protocol.ListResponse.Journal): JournalInfo = {
    val s = j.spec.getOrElse(throw GazetteErrors.internal("List returned a journal without a spec"))
    val labels = s.labels.map(_.labels).getOrElse(Nil).groupBy(_.name).map { case (k, ls) => k -> ls.map(_.value) }
    val suspended = s.suspend.exists(_.level == io.sparkgazette.client.protocol.JournalSpec.Suspend.Level.FULL)
    JournalInfo(
      s.name,
      labels.get("content-type").flatMap(_.headOption).getOrElse(""),
      labels,
      j.createRevision,
      suspended,
      s.suspend.map(_.offset).getOrElse(0L),
      s.fragment.flatMap(_.refreshInterval).map(d => d.seconds * 1000 + d.nanos / 1000000).getOrElse(0L)
    )
  }

  override def close(): Unit = pool.shutdownNow()
}
