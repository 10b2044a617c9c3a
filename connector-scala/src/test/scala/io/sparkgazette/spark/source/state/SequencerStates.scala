package io.sparkgazette.spark
package source
package state

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import io.sparkgazette.spark.source.offsets.StateRef

/** The Sequencer states a stream's checkpoint holds. */
object SequencerStates {

  /** Every state saved under the checkpoint of the query's first source. */
  def of(checkpoint: String): Seq[StateRef] = {
    val dir = java.nio.file.Paths.get(checkpoint, "sources", "0", "sequencer")
    val store = new SequencerStateStore(dir.toString, new org.apache.hadoop.conf.Configuration())
    if (!Files.exists(dir)) Nil
    else Files.walk(dir).iterator().asScala.filter(_.toString.endsWith(SequencerStateStore.Suffix)).toList
      .flatMap(p => store.index(dir.relativize(p).toString).getOrElse(Nil))
  }
}
