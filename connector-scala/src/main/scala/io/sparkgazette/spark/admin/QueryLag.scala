package io.sparkgazette.spark
package admin

import scala.util.control.NonFatal

import io.sparkgazette.client.GazetteClient
import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import io.sparkgazette.spark.source.offsets.{JournalPosition, JournalTarget}
import io.sparkgazette.spark.source.planning.{JournalDirectory, JournalInfo, JournalRangePlanner}
import io.sparkgazette.spark.source.progress.JournalLag

/** Where a query stands in one journal against its write head: `committed` the offset its last
  * committed batch ended at, `planned` the one the batch in progress will end at, how far
  * `committed` is behind the head in bytes and in time, and `note` why a number is missing (the
  * journal is gone, was created again, suspended, its time could not be looked at, or no
  * committed batch reached it).
  */
private[admin] final case class JournalLagRow(journal: String, committed: Option[Long], planned: Option[Long],
    writeHead: Option[Long], bytesBehind: Option[Long], timeBehindMs: Option[Long], note: Option[String])

/** The lag of a streaming query's Gazette sources: each journal's committed offset against its
  * write head, asked of the brokers now, in bytes and in time as the source's metrics count them
  * (`bytesBehindHead`, `maxTimeBehindHeadMs`).
  */
private[admin] object QueryLag {
  private val mapper = new ObjectMapper()

  /** Each source's journals' lag, by source, in the checkpoint's order. A journal the brokers
    * suspended has no replica to ask: its write head is where it was suspended, and its time
    * behind is not looked at. A journal whose time cannot be looked at (a broker refusing or
    * unreachable) has it unknown, and a note saying why: one journal never fails the report.
    */
  def measure(positions: CheckpointPositions, client: GazetteClient, nowMillis: Long)
      : Seq[(String, Seq[JournalLagRow])] = {
    val names = positions.sources.flatMap(s => s.committed.keys ++ s.planned.keys).distinct.sorted
    val directory = new JournalDirectory(client, JournalTarget.ByName(names))
    val (journals, heads) =
      try {
        val found = directory.journals()
        val (suspended, readable) = found.partition(_._2.suspended)
        (found, directory.writeHeads(readable.keys) ++ suspended.map { case (j, i) => j -> i.suspendedAt })
      } finally directory.close()
    positions.sources.map { s =>
      s.source -> (s.committed.keySet ++ s.planned.keySet).toSeq.sorted.map { j =>
        val row = journal(j, s.committed.get(j), s.planned.get(j), journals.get(j), heads.get(j))
        val suspended = journals.get(j).exists(_.suspended)
        (for {
          _ <- row.bytesBehind
          c <- row.committed
          h <- row.writeHead
        } yield (c, h)).fold(row) {
          case (c, h) if c >= h => row.copy(timeBehindMs = Some(0L))
          case _ if suspended => row
          case (c, h) =>
            try row.copy(timeBehindMs = JournalLag.timeBehind(client, j, c, h, nowMillis))
            catch {
              case NonFatal(e) =>
                val why = Option(e.getMessage).getOrElse(e.getClass.getSimpleName).takeWhile(_ != '\n')
                row.copy(note = Some(row.note.fold("")(_ + "; ") + s"time behind unknown: $why"))
            }
        }
      }
    }
  }

  private def journal(name: String, committed: Option[JournalPosition], planned: Option[JournalPosition],
      info: Option[JournalInfo], head: Option[Long]): JournalLagRow = {
    // A journal deleted and created again under its name is another journal: the offsets are not its.
    val recreated = info.flatMap(i =>
      committed.orElse(planned).filter(p => p.revision != 0 && i.revision != 0 && p.revision != i.revision)
        .map(p => s"created again since the checkpoint's offsets (revision ${i.revision}, not ${p.revision})"))
    val note = if (info.isEmpty) Some("journal not found")
    else recreated.orElse {
      if (committed.isEmpty) Some("in no committed batch yet")
      else if (info.exists(_.suspended)) Some("suspended: its write head is where the brokers suspended it")
      else None
    }
    val behind = for {
      c <- committed if recreated.isEmpty
      h <- head
    } yield JournalRangePlanner.behind(Map(name -> c.offset), Map(name -> h))(name)
    JournalLagRow(name, committed.map(_.offset), planned.map(_.offset), head, behind, None, note)
  }

  /** The lag as the Python package's `lag` returns it and `--json` prints it:
    * `{"checkpoint", "committedBatch", "plannedBatch", "measuredAt", "bytesBehind", "timeBehindMs",
    * "sources": [{"source", "bytesBehind", "timeBehindMs", "journals": [{"journal", "committed",
    * "planned", "writeHead", "bytesBehind", "timeBehindMs", "note"}]}]}`; a number not known is
    * null; totals sum the journals' known bytes behind and take the most time behind known.
    */
  def json(positions: CheckpointPositions, lags: Seq[(String, Seq[JournalLagRow])], measuredAt: Long): String = {
    val root = mapper.createObjectNode().put("checkpoint", positions.checkpoint)
    long(root, "committedBatch", positions.committedBatch)
    long(root, "plannedBatch", positions.plannedBatch)
    root.put("measuredAt", measuredAt)
    root.put("bytesBehind", lags.flatMap(_._2).flatMap(_.bytesBehind).sum)
    long(root, "timeBehindMs", most(lags.flatMap(_._2)))
    val sources = root.putArray("sources")
    lags.foreach { case (source, journals) =>
      val s = sources.addObject().put("source", source).put("bytesBehind", journals.flatMap(_.bytesBehind).sum)
      long(s, "timeBehindMs", most(journals))
      val each = s.putArray("journals")
      journals.foreach { l =>
        val j = each.addObject().put("journal", l.journal)
        long(j, "committed", l.committed)
        long(j, "planned", l.planned)
        long(j, "writeHead", l.writeHead)
        long(j, "bytesBehind", l.bytesBehind)
        long(j, "timeBehindMs", l.timeBehindMs)
        l.note.fold(j.putNull("note"))(j.put("note", _))
      }
    }
    mapper.writeValueAsString(root)
  }

  private def most(rows: Seq[JournalLagRow]): Option[Long] = {
    val known = rows.flatMap(_.timeBehindMs)
    if (known.isEmpty) None else Some(known.max)
  }

  private def long(node: ObjectNode, field: String, value: Option[Long]): Unit =
    value.fold(node.putNull(field))(node.put(field, _))
}
