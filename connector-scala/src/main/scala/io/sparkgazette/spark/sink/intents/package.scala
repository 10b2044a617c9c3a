package io.sparkgazette.spark.sink

/** Exactly-once writes' records: the ACK intent log in the checkpoint, an epoch's intents and the
  * staged runs they name, and the producers the writers publish under.
  */
package object intents
