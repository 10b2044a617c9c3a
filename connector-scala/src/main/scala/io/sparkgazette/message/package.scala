package io.sparkgazette

/** Gazette's message semantics, pure and free of I/O: what a message's UUID says (producer,
  * clock, transaction flags), how messages are framed in a journal, and how a reader sequences
  * them so that each committed message is seen exactly once.
  *
  * This package sees bytes and offsets only; it knows nothing of gRPC or Spark, so that every
  * rule here can be tested with in-memory journals.
  */
package object message
