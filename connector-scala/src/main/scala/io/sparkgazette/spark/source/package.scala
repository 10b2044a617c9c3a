package io.sparkgazette.spark

/** The DataSource V2 source: the scan, the batch and the micro-batch and real-time streams, which
  * use the parts below them and nothing above: `offsets` (what a query asks for and where it
  * stands), `planning` (what a batch reads), `reading` (tasks reading ranges), `rows` (messages
  * into rows), `realtime` (real-time tasks) and `state` (producers' states in the checkpoint).
  */
package object source
