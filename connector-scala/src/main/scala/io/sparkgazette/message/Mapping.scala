package io.sparkgazette.message

import java.nio.charset.StandardCharsets.UTF_8

/** Picks the journal a keyed message is published to, among journals listed in a fixed order
  * (Gazette lists journals sorted by name). `modulo` and `rendezvous` choose what Gazette's
  * ModuloMapping and RendezvousMapping choose for the same key and journals.
  */
sealed trait Mapping {
  def journals: IndexedSeq[String]

  /** The journal for a message with `key`. */
  def journalFor(key: Array[Byte]): String
}

object Mapping {

  /** 32-bit FNV-1a, Gazette's mapping hash. */
  def fnv1a32(b: Array[Byte]): Int = {
    var h = 0x811c9dc5
    var i = 0
    while (i < b.length) { h = (h ^ (b(i) & 0xff)) * 0x01000193; i += 1 }
    h
  }

  /** The key's hash modulo the number of journals: stable only while the journals are. */
  final case class Modulo(journals: IndexedSeq[String]) extends Mapping {
    require(journals.nonEmpty, "no journals to map to")
    override def journalFor(key: Array[Byte]): String =
      journals((Integer.toUnsignedLong(fnv1a32(key)) % journals.length).toInt)
  }

  /** Highest random weight: the journal whose name hash XOR the key's hash is largest, so that
    * adding or removing a journal moves only the keys it gains or loses.
    */
  final case class Rendezvous(journals: IndexedSeq[String]) extends Mapping {
    require(journals.nonEmpty, "no journals to map to")
    private val hashes = journals.map(j => fnv1a32(j.getBytes(UTF_8))).toArray

    override def journalFor(key: Array[Byte]): String = {
      val sum = fnv1a32(key)
      var best = 0L // Ties, and an all-zero weight, go to the first journal, as in Gazette.
      var index = 0
      var i = 0
      while (i < hashes.length) {
        val w = Integer.toUnsignedLong(sum ^ hashes(i))
        if (w > best) { best = w; index = i }
        i += 1
      }
      journals(index)
    }
  }

  /** A uniformly random journal for every message; the key is ignored. */
  final case class Random(journals: IndexedSeq[String], random: java.util.Random = new java.util.Random())
      extends Mapping {
    require(journals.nonEmpty, "no journals to map to")
    override def journalFor(key: Array[Byte]): String = journals(random.nextInt(journals.length))
  }

  /** The mapping named `name` (`modulo`, `rendezvous` or `random`) over `journals`. */
  def named(name: String, journals: IndexedSeq[String]): Either[String, Mapping] = name match {
    case "modulo" => Right(Modulo(journals))
    case "rendezvous" => Right(Rendezvous(journals))
    case "random" => Right(Random(journals))
    case other => Left(s"unknown mapping '$other'; expected modulo, rendezvous or random")
  }
}
