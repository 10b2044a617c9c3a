package io.sparkgazette.spark
package source
package state

import scala.collection.mutable

import io.sparkgazette.spark.source.offsets.{JournalPosition, StateRef}

/** The driver's view of the saved states: which states exist, by `(journal, offset, revision,
  * origin)`, and in which file. It reads a batch directory's indexes once (a listing and one
  * read per task of the batch), so that planning and committing a batch never list a directory
  * per journal; after a restart it reads every directory left.
  *
  * Where two files hold a state with the same key (attempts of a batch packed differently, say
  * before and after a restart), the one in the file read first wins, as it would in a
  * create-if-absent file per state.
  *
  * A journal read afresh may enter again under its earlier entry's key (the same revision and
  * origin), and files other journals' states keep still hold that entry's states. Forgetting a
  * journal is therefore written down in the store (see [[SequencerStateStore.forget]]): every
  * file that holds a state of the journal, and none of them is found again, by this catalog or
  * one a restarted driver builds. A record goes once none of its files is left.
  */
private[source] final class SequencerStateCatalog(store: SequencerStateStore) {
  private val byJournal = mutable.Map[String, mutable.TreeMap[Long, List[StateRef]]]()
  private val filesRead = mutable.Set[String]()
  private val batchesRead = mutable.Set[String]()
  private var loaded = false
  private var pinned = Set.empty[String]
  // The files holding states of each journal, pruned or not: what forgetting the journal hides.
  private val journalFiles = mutable.Map[String, mutable.Set[String]]()
  // Records of forgotten journals, by name, and the journals each file hides.
  private val records = mutable.Map[String, Seq[ForgottenState]]()
  private val hidden = mutable.Map[String, Set[String]]()

  /** Reads the directory of the batch ending at `end` unless it was read; `again`: reads what
    * it holds now that was not read (a committed batch re-run after a restart wrote its files
    * after the restart listed its directory).
    */
  def refresh(batch: String, again: Boolean = false): Unit = synchronized {
    loadAll()
    if (again || !batchesRead(batch)) {
      val files = store.files(batch)
      if (files.nonEmpty) batchesRead += batch
      files.filterNot(filesRead).foreach(add)
    }
  }

  /** The state saved at exactly `offset`, or else the newest in `[from, offset]`, of the entry. */
  def lookup(journal: String, from: Long, offset: Long, revision: Long, origin: Long): Option[StateRef] = synchronized {
    loadAll()
    byJournal.get(journal).flatMap { states =>
      states.range(from, offset + 1).toSeq.reverseIterator.takeWhile(_._1 >= from)
        .flatMap(_._2.find(r => r.revision == revision && r.origin == origin)).take(1).toList.headOption
    }
  }

  /** Keeps, for each journal `committed` holds, the states of its entry at or above the newest
    * one at or below its offset, and the states of the entry `planned` holds (a batch planned
    * after the journal was read afresh); forgets every other state. Deletes the files no kept
    * state is in, and batch directories left with no file.
    */
  def prune(committed: Map[String, JournalPosition], planned: Map[String, JournalPosition]): Unit = synchronized {
    loadAll()
    byJournal.keys.toSeq.foreach { j =>
      val states = byJournal(j)
      def same(r: StateRef, p: JournalPosition) = r.revision == p.revision && r.origin == p.origin
      val floor = committed.get(j).flatMap(p =>
        states.range(Long.MinValue, p.offset + 1).toSeq.reverseIterator
          .find(_._2.exists(same(_, p))).map(_._1))
      states.keys.toSeq.foreach { o =>
        val kept = states(o).filter(r =>
          committed.get(j) match {
            case Some(p) if same(r, p) => floor.forall(o >= _)
            case _ => planned.get(j).exists(same(r, _))
          })
        if (kept.isEmpty) states.remove(o) else states(o) = kept
      }
      if (states.isEmpty) byJournal.remove(j)
    }
    val live = liveFiles ++ pinned
    // A file is let go once it is gone for sure: one left (a delete that failed) would show its
    // states to a restarted driver, and forgetting must still find it.
    val dead = (filesRead.toSet -- live).filter { f => store.delete(f); !store.exists(f) }
    filesRead --= dead
    journalFiles.valuesIterator.foreach(_ --= dead)
    journalFiles.filter(_._2.isEmpty).keys.toList.foreach(journalFiles.remove)
    val liveBatches = filesRead.map(batchOf)
    dead.map(batchOf).filterNot(liveBatches).foreach { b =>
      store.delete(b)
      batchesRead -= b
    }
    val spent = records.collect { case (name, states) if !states.exists(s => filesRead(s.file)) => name }.toSeq
    if (spent.nonEmpty) {
      spent.foreach { name => store.delete(name); records -= name }
      hidden.clear()
      records.foreach { case (name, states) => remember(name, states) }
    }
  }

  /** Keeps the files of `refs` whatever [[prune]] decides, until the next call: the running batch's tasks read them. */
  def pin(refs: Iterable[StateRef]): Unit = synchronized { pinned = refs.map(_.file).toSet }

  /** Forgets the states of `journals`, for good: they are read afresh. `justRan` is the directory
    * of the batch that just ran, whose files the catalog reads only when that batch is committed,
    * after the next one is planned.
    */
  def forget(journals: Iterable[String], justRan: Option[String] = None): Unit = synchronized {
    loadAll()
    justRan.foreach(refresh(_, again = true))
    val states = journals.toSeq.flatMap { j =>
      byJournal.remove(j)
      journalFiles.remove(j).toSeq.flatten.map(f => ForgottenState(f, j))
    }
    if (states.nonEmpty) remember(store.forget(states), states)
  }

  /** The states files the catalog knows, for tests and metrics. */
  def files: Set[String] = synchronized { liveFiles }

  private def liveFiles: Set[String] = { byJournal.valuesIterator.flatMap(_.valuesIterator.flatten).map(_.file).toSet }

  private def batchOf(file: String): String = file.substring(0, file.lastIndexOf('/'))

  private def loadAll(): Unit = if (!loaded) {
    loaded = true
    store.forgotten().foreach { case (name, states) => remember(name, states) }
    store.batches().foreach { b =>
      batchesRead += b
      store.files(b).foreach(add)
    }
  }

  private def remember(name: String, states: Seq[ForgottenState]): Unit = {
    records(name) = states
    states.foreach(s => hidden(s.file) = hidden.getOrElse(s.file, Set.empty) + s.journal)
  }

  private def add(file: String): Unit = {
    filesRead += file
    val forgotten = hidden.getOrElse(file, Set.empty)
    store.index(file).getOrElse(Nil).filterNot(r => forgotten(r.journal)).foreach { r =>
      journalFiles.getOrElseUpdate(r.journal, mutable.Set.empty) += file
      val states = byJournal.getOrElseUpdate(r.journal, mutable.TreeMap.empty)
      val at = states.getOrElse(r.offset, Nil)
      if (!at.exists(o => o.revision == r.revision && o.origin == r.origin)) states(r.offset) = at :+ r
    }
  }
}
