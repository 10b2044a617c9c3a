package io.sparkgazette.spark
package source
package state

import java.io.{BufferedOutputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream, FileNotFoundException}
import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest
import java.util.UUID

import scala.collection.mutable
import scala.util.control.NonFatal

import io.sparkgazette.message.{ProducerId, ProducerState}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, FileStatus, FileSystem, Path}

/** A journal's read-committed state at a batch boundary `offset`: where reading resumes (the end
  * of the last message that ends at or before `offset`) and its producers' states. `revision`
  * and `origin` name the journal's entry into the query (see [[JournalPosition]]): a state an
  * earlier entry left behind, say by an attempt still running when the journal was read afresh,
  * is not this entry's.
  */
private[spark] final case class SequencerState(resume: Long, producers: Seq[ProducerState], revision: Long = 0L,
    origin: Long = -1L)
