package io.sparkgazette.testing

import com.google.gson.JsonObject

/** ndjson documents with their UUID moved between Gazette's place (`/_meta/uuid`, where the
  * judge's Publisher writes it) and another (`path`), for tests of `uuidPointer`: Gazette's
  * reader judges the same sequence of UUIDs at its own place.
  */
object MovedUuids {

  /** The document without a UUID at either place. */
  def strip(doc: String, path: Seq[String]): String = stripped(doc, path).toString

  /** The document with `uuid` at `path` only (none when `uuid` is empty). */
  def place(doc: String, uuid: String, path: Seq[String]): String = {
    val o = stripped(doc, path)
    if (uuid.nonEmpty) {
      val parent = path.init.foldLeft(o) { (at, name) =>
        if (!at.has(name)) at.add(name, new JsonObject)
        at.getAsJsonObject(name)
      }
      parent.addProperty(path.last, uuid)
    }
    o.toString
  }

  /** The string at `path`, or "" when there is none. */
  def at(doc: String, path: Seq[String]): String = {
    val leaf = path.init.foldLeft(Option(Json.parse(doc).getAsJsonObject)) { (at, name) =>
      at.filter(_.has(name)).map(_.getAsJsonObject(name))
    }
    leaf.filter(_.has(path.last)).map(_.get(path.last).getAsString).getOrElse("")
  }

  private def stripped(doc: String, path: Seq[String]): JsonObject = {
    val o = Json.parse(doc).getAsJsonObject
    o.remove("_meta")
    o.remove(path.head)
    o
  }
}
