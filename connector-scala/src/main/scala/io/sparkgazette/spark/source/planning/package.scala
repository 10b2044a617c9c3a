package io.sparkgazette.spark.source

/** What a batch reads, decided on the driver: the journals a selector names and their write
  * heads, times resolved to offsets, ranges capped and split, heads that went back.
  */
package object planning
