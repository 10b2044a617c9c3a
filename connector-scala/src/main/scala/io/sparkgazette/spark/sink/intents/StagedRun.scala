package io.sparkgazette.spark
package sink
package intents

/** One task's messages to one journal, staged under the checkpoint rather than appended by the
  * task: committed (OUTSIDE_TXN) messages that only the driver's commit makes anyone append.
  *
  * Why: the driver appends a stream's ACKs after every task's run, so a read-committed reader
  * holds every run of an epoch in its ring until the ACKs come; an epoch larger than the ring
  * (Gazette's default: 8,192 messages) is replayed from each run to its ACK, several times
  * over. A staged run is appended after the epoch is recorded, so its messages need no ACK and
  * readers never hold them. Appending one again (a publish retried, a driver restarted) is
  * done at most once whatever readers remember: the append checks that the journal's register
  * for the run's producer does not hold the run's `token` and sets it, so that a second append
  * of the run (a publish retried, a driver restarted) fails with REGISTER_MISMATCH and is skipped.
  *
  * @param clock    the clock of the run's last message: where its producer stands in `journal`
  * @param token    the run's name among the journal's registers while it is published
  * @param revision the Etcd revision that created `journal`: a journal re-created since gets nothing
  * @param quietAck an ACK at `clock`, which readers ignore once they have read the run: the
  *                 bytes the cleanup append carries (an append must carry some)
  * @param part     which part of the task's run in `journal` this is (see [[StagedRunWriter]])
  */
private[sink] final case class StagedRun(journal: String, path: String, bytes: Long, producer: String, clock: Long,
    token: String,
    revision: Long, quietAck: Array[Byte], part: Int = 0)
