package io.sparkgazette.spark

/** What the tasks of sources and sinks share within one JVM: gRPC clients by configuration, the
  * Hadoop configuration sent to executors, and which journals the running real-time tasks read.
  */
package object runtime
