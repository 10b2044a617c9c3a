package io.sparkgazette.spark
package source
package state

import scala.collection.mutable

/** The driver's view of the saved states: which states exist, by `(journal, offset, revision,
  * origin)`, and in which file. It reads a batch directory's indexes once (a listing and one
  * read per task of the batch), so that planning and committing a batch never list a directory
  * per journal; after a restart it reads every directory left.
  *
  * Where two files hold a state with the same key (attempts of a batch packed differently, say
  * before and after a restart), the one in the file read first wins, as it would in a
  * create-if-absent file per state.
  *
  * Forgetting a journal's states is written down in the store (see [[SequencerStateStore.forget]])
  * and heeded whenever a file is read, by this catalog or one a restarted driver builds: a
  * forgotten state hides for good, its file goes once no other state keeps it, and the record
  * once none of its files is left.
  */
private[spark] final class SequencerStateCatalog(store: SequencerStateStore) {
  private val byJournal = mutable.Map[String, mutable.TreeMap[Long, List[StateRef]]]()
  private val filesRead = mutable.Set[String]()
  private val batchesRead = mutable.Set[String]()
  private var loaded = false
  private var pinned = Set.empty[String]
  // Records of forgotten states: by record name, and the keys each hides by file.
  private val records = mutable.Map[String, Seq[ForgottenState]]()
  private val hidden = mutable.Map[String, Set[(String, Long, Long, Long)]]()
  // States whose key a state read earlier holds: never found, but forgotten with it.
  private val copies = mutable.Map[(String, Long, Long, Long), List[StateRef]]()

  /** Reads the directory of the batch ending at `end` unless it was read; `again`: reads what
    * it holds now that was not read (a committed batch re-run after a restart wrote its files
    * after the restart listed its directory).
    */
  def refresh(batch: String, again: Boolean = false): Unit = synchronized {
    loadAll()
    if (again || !batchesRead(batch)) {
      batchesRead += batch
      store.files(batch).filterNot(filesRead).foreach(add)
    }
  }

  /** The state saved at exactly `offset`, or else the newest in `[from, offset]`, of the entry. */
  def lookup(journal: String, from: Long, offset: Long, revision: Long, origin: Long): Option[StateRef] = synchronized {
    loadAll()
    byJournal.get(journal).flatMap { states =>
      states.rangeTo(offset).toSeq.reverseIterator.takeWhile(_._1 >= from)
        .flatMap(_._2.find(r => r.revision == revision && r.origin == origin)).nextOption()
    }
  }

  /** Keeps, for each journal `committed` holds, the states of its entry at or above the newest
    * one at or below its offset, and the states of the entry `planned` holds (a batch planned
    * after the journal was read afresh); forgets every other state. Deletes the files no kept
    * state is in, and batch directories left with no file. States of an entry no longer read
    * that stay in a kept file are forgotten for good (the journal may enter again under the
    * same key).
    */
  def prune(committed: Map[String, JournalPosition], planned: Map[String, JournalPosition]): Unit = synchronized {
    loadAll()
    val otherEntries = mutable.Buffer[StateRef]()
    byJournal.keys.toSeq.foreach { j =>
      val states = byJournal(j)
      def same(r: StateRef, p: JournalPosition) = r.revision == p.revision && r.origin == p.origin
      val floor = committed.get(j).flatMap(p =>
        states.rangeTo(p.offset).toSeq.reverseIterator
          .find(_._2.exists(same(_, p))).map(_._1))
      def entryKept(r: StateRef) = committed.get(j).exists(same(r, _)) || planned.get(j).exists(same(r, _))
      states.keys.toSeq.foreach { o =>
        val kept = states(o).filter(r =>
          committed.get(j) match {
            case Some(p) if same(r, p) => floor.forall(o >= _)
            case _ => planned.get(j).exists(same(r, _))
          })
        val dropped = states(o).filterNot(kept.contains)
        otherEntries ++= dropped.filterNot(entryKept).flatMap(r => r :: copies.getOrElse(key(r), Nil))
        dropped.foreach(r => copies -= key(r))
        if (kept.isEmpty) states.remove(o) else states(o) = kept
      }
      if (states.isEmpty) byJournal.remove(j)
    }
    val live = liveFiles ++ pinned
    val stay = otherEntries.filter(r => live(r.file)).toSeq
    if (stay.nonEmpty) remember(store.forget(stay), stay.map(forgottenKey))
    val dead = filesRead.toSet -- live
    dead.foreach { f =>
      store.delete(f)
      filesRead -= f
    }
    copies.filterInPlace { case (_, refs) => refs.exists(r => filesRead(r.file)) }
    val liveBatches = (live ++ filesRead).map(batchOf)
    dead.map(batchOf).filterNot(liveBatches).foreach { b =>
      store.delete(b)
      batchesRead -= b
    }
    // A record goes once its files are gone for sure: one left (a delete that failed) would show
    // its states to a restarted driver.
    val spent = records.collect {
      case (name, states) if !states.exists(s => filesRead(s.file)) && !states.exists(s => store.exists(s.file)) => name
    }.toSeq
    if (spent.nonEmpty) {
      spent.foreach { name => store.delete(name); records -= name }
      hidden.clear()
      records.foreach { case (name, states) => remember(name, states) }
    }
  }

  /** Keeps the files of `refs` whatever [[prune]] decides, until the next call: the running batch's tasks read them. */
  def pin(refs: Iterable[StateRef]): Unit = synchronized { pinned = refs.map(_.file).toSet }

  /** Forgets the states of `journals`, for good: they are read afresh. The batch that just ran
    * saved states the catalog has not read yet (it reads a batch's directory when the batch is
    * committed, after the next one is planned), so every directory is read again first.
    */
  def forget(journals: Iterable[String]): Unit = synchronized {
    if (journals.nonEmpty) {
      loadAll()
      store.batches().foreach { b =>
        batchesRead += b
        store.files(b).filterNot(filesRead).foreach(add)
      }
      val refs = journals.toSeq.flatMap(j => byJournal.remove(j).toSeq.flatMap(_.valuesIterator.flatten))
        .flatMap(r => r :: copies.remove(key(r)).getOrElse(Nil))
      if (refs.nonEmpty) remember(store.forget(refs), refs.map(forgottenKey))
    }
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

  private def key(r: StateRef) = (r.journal, r.offset, r.revision, r.origin)

  private def forgottenKey(r: StateRef) = ForgottenState(r.file, r.journal, r.offset, r.revision, r.origin)

  private def remember(name: String, states: Seq[ForgottenState]): Unit = {
    records(name) = states
    states.foreach(s =>
      hidden(s.file) = hidden.getOrElse(s.file, Set.empty) + ((s.journal, s.offset, s.revision, s.origin)))
  }

  private def add(file: String): Unit = {
    filesRead += file
    val forgotten = hidden.getOrElse(file, Set.empty)
    store.index(file).getOrElse(Nil).filterNot(r => forgotten((r.journal, r.offset, r.revision, r.origin))).foreach {
      r =>
        val states = byJournal.getOrElseUpdate(r.journal, mutable.TreeMap.empty)
        val at = states.getOrElse(r.offset, Nil)
        if (!at.exists(o => o.revision == r.revision && o.origin == r.origin)) states(r.offset) = at :+ r
        else copies(key(r)) = copies.getOrElse(key(r), Nil) :+ r
    }
  }
}
