package io.sparkgazette.testing

import scala.annotation.nowarn

import com.google.gson.{JsonObject, JsonParser}

/** JSON documents as the judge and the suites read them, with any gson Spark ships: 3.5's has no
  * `JsonParser.parseString`.
  */
object Json {
  @nowarn("cat=deprecation")
  def parse(text: String): com.google.gson.JsonElement = new JsonParser().parse(text)

  def obj(text: String): JsonObject = parse(text).getAsJsonObject
}
