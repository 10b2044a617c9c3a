package io.sparkgazette.message

import java.io.{ObjectInputStream, ObjectOutputStream}

import scala.collection.mutable

/** What a run of one journal's messages does to its producers' states, whatever they were
  * before it: a function from the [[ProducerState]]s at the run's first message to those a
  * [[Sequencer]] holds after its last, built from the messages' UUIDs and offsets alone, without
  * sequencing them. Composing the transfers of consecutive runs from the states at the first one's
  * start gives the states at every run's end exactly, so that a journal's range can be sequenced
  * by several readers at once, each from the states at its own start.
  *
  * A producer's saved state is its last ACK's clock and where its open transaction began (-1 if
  * none), and each message moves it alone (a Sequencer's other per-producer clock, the largest
  * held, is not saved, and no move depends on it):
  *
  *  - an ACK_TXN message at clock c, committing or rolling back, leaves (c, -1);
  *  - an OUTSIDE_TXN message (or one with flags Gazette does not know) at a clock above the last
  *    ACK leaves (c, -1), abandoning an open transaction; at or below it, it is a duplicate;
  *  - a CONTINUE_TXN message above the last ACK, with no transaction open, opens one where it
  *    begins; otherwise it changes nothing;
  *  - a producer met first in the run starts at (its first clock - 1, -1); messages without a
  *    clock touch no state.
  *
  * So a producer with an ACK in the run ends in a state its earlier states cannot change: the
  * transfer keeps that state (a constant). For a producer without one it keeps the run's moves,
  * dropping those no earlier state can make count: an OUTSIDE_TXN message at or below an earlier
  * one's clock (the last ACK is at least that by then), a CONTINUE_TXN message at or below an
  * earlier OUTSIDE_TXN one's clock or at or below a CONTINUE_TXN clock kept since the last
  * OUTSIDE_TXN message (that one opened the transaction, or found the clock acknowledged), and
  * consecutive OUTSIDE_TXN messages, which act as their largest clock does. What remains is a
  * list of increasing OUTSIDE_TXN clocks with the CONTINUE_TXN messages that can open a
  * transaction between them: long only for a producer writing a long transaction without an ACK
  * in the run. [[size]] counts what the transfer holds, for callers that bound it.
  */
final class StateTransfer private (private var producers: mutable.LongMap[StateTransfer.Moves]) extends Serializable {
  import StateTransfer._

  def this() = this(mutable.LongMap.empty[StateTransfer.Moves])

  private var entries = 0L
  producers.valuesIterator.foreach(m => entries += 1 + m.n)

  /** Producers plus the moves kept for them. */
  def size: Long = entries

  /** Whether no message of the run touched a state. */
  def isEmpty: Boolean = producers.isEmpty

  /** Records the next message of the run. */
  def add(producer: ProducerId, clock: Long, flags: Int, begin: Long): Unit =
    if (clock != 0) {
      // Once a message of every producer: no closure, no tuple (this runs for every message of a first pass).
      var m = producers.getOrNull(producer.value)
      if (m == null) {
        m = new Moves(clock)
        producers.update(producer.value, m)
        entries += 1
      }
      if (m.constant) m.step(kindOf(flags), clock, begin)
      else {
        val before = m.n
        m.add(kindOf(flags), clock, begin)
        entries += m.n - before
      }
    }

  /** Records `env`, a message of the run. */
  def add(env: Envelope[_]): Unit = add(env.producer, env.clock, env.flags, env.begin)

  /** The states after the run, given `states`, those of `journal`'s producers at its start. */
  def apply(journal: String, states: Seq[ProducerState]): Seq[ProducerState] = {
    val by = mutable.LongMap[ProducerState]()
    states.foreach(s => by(s.producer.value) = s)
    producers.foreach { case (id, m) =>
      val (lastAck, begin) = by.get(id) match {
        case Some(s) => m.applyTo(s.lastAck, s.begin)
        case None => m.applyTo(m.first - 1, -1L)
      }
      by(id) = ProducerState(journal, ProducerId(id), lastAck, begin)
    }
    val ids = by.keys.toArray
    java.util.Arrays.sort(ids)
    ids.toSeq.map(by)
  }

  /** The transfer of this run followed by `next`'s. */
  def andThen(next: StateTransfer): StateTransfer = {
    val out = mutable.LongMap[Moves]()
    producers.foreach { case (id, m) => out(id) = m.copy() }
    next.producers.foreach { case (id, q) =>
      out.get(id) match {
        case Some(p) if !q.constant => p.addAll(q)
        case _ => out(id) = q.copy()
      }
    }
    new StateTransfer(out)
  }

  override def toString: String =
    producers.toSeq.sortBy(_._1).map { case (id, m) => s"${ProducerId(id)}: $m" }.mkString("StateTransfer(", "; ", ")")

  // Compactly: a transfer may hold a journal's hundred thousand producers, and travels in tasks.
  private def writeObject(out: ObjectOutputStream): Unit = {
    out.writeInt(producers.size)
    producers.foreach { case (id, m) =>
      out.writeLong(id)
      out.writeBoolean(m.constant)
      out.writeLong(m.first)
      out.writeLong(m.lastAck)
      out.writeLong(m.begin)
      out.writeInt(m.n)
      var i = 0
      while (i < m.n) { out.writeLong(m.clocks(i)); out.writeLong(m.begins(i)); i += 1 }
    }
  }

  private def readObject(in: ObjectInputStream): Unit = {
    val n = in.readInt()
    producers = new mutable.LongMap[Moves](n)
    entries = 0L
    for (_ <- 0 until n) {
      val id = in.readLong()
      val m = new Moves(0L)
      m.constant = in.readBoolean()
      m.first = in.readLong()
      m.lastAck = in.readLong()
      m.begin = in.readLong()
      val k = in.readInt()
      for (_ <- 0 until k) m.append(in.readLong(), in.readLong())
      producers(id) = m
      entries += 1 + k
    }
  }
}

object StateTransfer {

  /** The transfer of `messages`, in journal order. */
  def of(messages: Iterator[Envelope[_]]): StateTransfer = {
    val t = new StateTransfer()
    messages.foreach(t.add)
    t
  }

  private final val Continue = 1
  private final val Ack = 2
  private final val Outside = 0

  // As the Sequencer classifies flags: anything but CONTINUE_TXN or ACK_TXN is OUTSIDE_TXN.
  private def kindOf(flags: Int): Int = flags match {
    case Flags.ContinueTxn => Continue
    case Flags.AckTxn => Ack
    case _ => Outside
  }

  /** One producer's part of a transfer: a constant state (it acknowledged in the run), or the
    * moves kept, each a clock and the offset where it begins (-1 for an OUTSIDE_TXN move).
    */
  private final class Moves(var first: Long) {
    var constant = false
    var lastAck = 0L
    var begin = -1L
    var clocks: Array[Long] = Array.emptyLongArray
    var begins: Array[Long] = Array.emptyLongArray
    var n = 0
    // The largest OUTSIDE_TXN clock kept, and the largest CONTINUE_TXN clock kept since it.
    private var outside = Long.MinValue
    private var continued = Long.MinValue

    // One message's move of the constant state.
    def step(kind: Int, clock: Long, at: Long): Unit = kind match {
      case Ack => lastAck = clock; begin = -1L
      case Outside => if (clock > lastAck) { lastAck = clock; begin = -1L }
      case _ => if (clock > lastAck && begin == -1L) begin = at
    }

    def add(kind: Int, clock: Long, at: Long): Unit =
      if (constant) step(kind, clock, at)
      else kind match {
        case Ack =>
          constant = true
          lastAck = clock
          begin = -1L
          clocks = Array.emptyLongArray
          begins = Array.emptyLongArray
          n = 0
        case Outside =>
          if (clock > outside) {
            if (n > 0 && begins(n - 1) == -1L) clocks(n - 1) = clock else append(clock, -1L)
            outside = clock
            continued = Long.MinValue
          }
        case _ =>
          if (clock > outside && clock > continued) {
            append(clock, at)
            continued = clock
          }
      }

    def append(clock: Long, at: Long): Unit = {
      if (n == clocks.length) {
        val grown = math.max(4, n * 2)
        clocks = java.util.Arrays.copyOf(clocks, grown)
        begins = java.util.Arrays.copyOf(begins, grown)
      }
      clocks(n) = clock
      begins(n) = at
      n += 1
      if (at == -1L) { outside = math.max(outside, clock); continued = Long.MinValue }
      else continued = math.max(continued, clock)
    }

    def addAll(q: Moves): Unit = {
      var i = 0
      while (i < q.n) { add(if (q.begins(i) == -1L) Outside else Continue, q.clocks(i), q.begins(i)); i += 1 }
    }

    def applyTo(lastAck0: Long, begin0: Long): (Long, Long) =
      if (constant) (lastAck, begin)
      else {
        var l = lastAck0
        var b = begin0
        var i = 0
        while (i < n) {
          val (l2, b2) = move(l, b, if (begins(i) == -1L) Outside else Continue, clocks(i), begins(i))
          l = l2
          b = b2
          i += 1
        }
        (l, b)
      }

    def copy(): Moves = {
      val m = new Moves(first)
      m.constant = constant
      m.lastAck = lastAck
      m.begin = begin
      m.clocks = java.util.Arrays.copyOf(clocks, n)
      m.begins = java.util.Arrays.copyOf(begins, n)
      m.n = n
      m.outside = outside
      m.continued = continued
      m
    }

    override def toString: String =
      if (constant) s"($lastAck, $begin)"
      else (0 until n).map(i => if (begins(i) == -1L) s"O${clocks(i)}" else s"C${clocks(i)}@${begins(i)}")
        .mkString(s"first $first: ", " ", "")
  }

  // One message's move of a saved state (lastAck, begin).
  private def move(lastAck: Long, begin: Long, kind: Int, clock: Long, at: Long): (Long, Long) = kind match {
    case Ack => (clock, -1L)
    case Outside => if (clock > lastAck) (clock, -1L) else (lastAck, begin)
    case _ => if (clock > lastAck && begin == -1L) (lastAck, at) else (lastAck, begin)
  }
}
