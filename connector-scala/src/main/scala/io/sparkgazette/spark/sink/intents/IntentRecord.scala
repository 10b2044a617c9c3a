package io.sparkgazette.spark
package sink
package intents

import io.sparkgazette.message.AckIntent

/** What is recorded for one write: its ACK intents, its staged runs and, for a stream, where its
  * producers stand once they are appended; for a real-time batch, before it runs, its producers'
  * seed and the journals its rows are mapped over.
  */
private[sink] final case class IntentRecord(intents: Seq[AckIntent], producers: Option[SinkProducers] = None,
    staged: Seq[StagedRun] = Nil, journals: Seq[String] = Nil)
