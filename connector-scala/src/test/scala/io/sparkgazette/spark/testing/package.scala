package io.sparkgazette.spark

/** Helpers the Spark suites share: how a batch is consumed, and how its errors are told apart. */
package object testing {

  /** A row as the suites compare it with Gazette's reader: journal, begin, end, UUID. */
  type MessageKey = (String, Long, Long, String)
}
