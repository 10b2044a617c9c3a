package io.sparkgazette.spark
package admin

import scala.jdk.CollectionConverters._
import scala.util.Try

import io.sparkgazette.spark.errors.GazetteErrors
import com.fasterxml.jackson.databind.ObjectMapper
import io.sparkgazette.spark.source.offsets.{JournalOffsets, JournalPosition}
import io.sparkgazette.spark.source.state.SequencerStateStore

/** Where one Gazette source of a query stands: `committed`, where its last committed batch ended
  * (before any commit, where the query began); `planned`, where the batch in progress, planned
  * and not committed, will end (empty when none is).
  */
private[admin] final case class SourcePositions(source: String, committed: Map[String, JournalPosition],
    planned: Map[String, JournalPosition])

/** The positions of a query's Gazette sources in its checkpoint: `committedBatch` the last batch
  * committed, `plannedBatch` a later batch planned and not committed yet.
  */
private[admin] final case class CheckpointPositions(checkpoint: String, committedBatch: Option[Long],
    plannedBatch: Option[Long], sources: Seq[SourcePositions])

private[admin] object CheckpointPositions {
  private val mapper = new ObjectMapper()

  /** The positions of the Gazette sources in `checkpoint`; an error saying what was found there
    * when it is not a streaming query's checkpoint, or its query reads no Gazette journals.
    */
  def read(checkpoint: SparkCheckpoint): CheckpointPositions = {
    val path = checkpoint.path
    if (!checkpoint.exists) throw GazetteErrors.notASourceCheckpoint("MISSING", path)
    if (!checkpoint.hasOffsetLog) {
      val found = checkpoint.entries
      throw GazetteErrors.notASourceCheckpoint("NO_OFFSET_LOG", path,
        if (found.isEmpty) "nothing" else found.mkString(", "))
    }
    val last = checkpoint.planned.lastOption.getOrElse(throw GazetteErrors.notASourceCheckpoint("NO_BATCH", path))
    val committedBatch = checkpoint.committed.lastOption
    val plannedBatch = Some(last).filter(l => committedBatch.forall(_ < l))
    val latest = checkpoint.offsets(last)
    val before = committedBatch.map(b => if (b == last) latest else checkpoint.offsets(b)).map(_.toMap)
    val ours = latest.collect { case (source, Some(json)) if journalOffsets(json) => source }
    if (ours.isEmpty) throw GazetteErrors.notASourceCheckpoint(
      "NO_GAZETTE_SOURCE",
      path,
      others(last, latest) +
        (if (checkpoint.hasSinkLog) s"; it writes to Gazette (${SparkCheckpoint.SinkState}/), which is not read"
         else "")
    )
    val sources = ours.map { source =>
      val committed = before match {
        case Some(offsets) => offsets.get(source).flatten.map(positions).getOrElse(Map.empty[String, JournalPosition])
        case None => // nothing committed: the first batch starts where the query began
          checkpoint.read(SequencerStateStore.initialOffsetsOf(s"${SparkCheckpoint.SourceDirs}/$source"))
            .map(positions).getOrElse(Map.empty[String, JournalPosition])
      }
      val planned =
        if (plannedBatch.isEmpty) Map.empty[String, JournalPosition]
        else latest.toMap.get(source).flatten.map(positions).getOrElse(Map.empty[String, JournalPosition])
      SourcePositions(source, committed, planned)
    }
    CheckpointPositions(path, committedBatch, plannedBatch, sources)
  }

  /** Whether a source's offset is the connector's: an object of journals, each with its offset
    * and the rest of its position. Other sources' may be objects too (a file source's
    * `{"logOffset":2}`, Kafka's topics of partitions), but not of positions.
    */
  def journalOffsets(json: String): Boolean =
    Try(mapper.readTree(json)).toOption.exists(n =>
      n != null && n.isObject && n.size() > 0 &&
        n.properties().asScala.forall(e => e.getValue.isObject && e.getValue.has("offset")))

  private def positions(json: String): Map[String, JournalPosition] = JournalOffsets.fromJson(json).positions

  private def others(batch: Long, offsets: Seq[(String, Option[String])]): String = {
    val each = offsets.map { case (source, json) =>
      val shown = json.fold("none")(j => if (j.length > 80) j.take(77) + "..." else j)
      s"source $source: $shown"
    }
    s"${SparkCheckpoint.OffsetLog}/$batch holds " +
      (if (each.isEmpty) "no source's offsets" else each.mkString("; ")) + ", none of them journal offsets"
  }
}
