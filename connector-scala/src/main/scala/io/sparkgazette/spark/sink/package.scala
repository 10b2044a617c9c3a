package io.sparkgazette.spark

/** The DataSource V2 sink: the write, its epochs' commits on the driver (`SinkDriver`) and the
  * writers in tasks, over the parts below: `config`, `intents` (the ACK intent log), `rows` (rows
  * into messages), `staging` (staged runs) and `realtime` (real-time writers).
  */
package object sink
