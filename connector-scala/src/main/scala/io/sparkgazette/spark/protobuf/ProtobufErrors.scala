package io.sparkgazette.spark.protobuf

import io.sparkgazette.spark.errors.{GazetteIllegalArgumentException, GazetteIllegalStateException}

/** The errors of protobuf decoding, worded with the connector's others in `error-conditions.json`
  * (conditions `GAZETTE_PROTOBUF_*`) and of the same family, but built here: this package uses
  * the connector's errors, not its front, which uses this package.
  */
private[spark] object ProtobufErrors {

  private[spark] def invalidArgument(name: String, value: String, expected: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_PROTOBUF_INVALID_ARGUMENT",
      Map("argument" -> name, "value" -> value, "expected" -> expected))

  private[spark] def badDescriptorSet(file: String, problem: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_PROTOBUF_INVALID_DESCRIPTOR_SET", Map("file" -> file, "reason" -> problem))

  private[spark] def unknownProtobufMessage(name: String, file: String, known: Seq[String])
      : GazetteIllegalArgumentException =
    GazetteIllegalArgumentException(
      "GAZETTE_PROTOBUF_UNKNOWN_MESSAGE",
      Map("message" -> name, "file" -> file,
        "knownMessages" -> (if (known.isEmpty) "none" else known.sorted.mkString(", ")))
    )

  private[spark] def recursiveProtobuf(path: String, field: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_PROTOBUF_RECURSIVE_MESSAGE", Map("field" -> field, "path" -> path))

  /** A payload that is not a `message`; its journal and offset are `?` where the caller does not know them. */
  private[spark] def malformedProtobuf(message: String, journal: String, begin: java.lang.Long, problem: String)
      : GazetteIllegalStateException =
    GazetteIllegalStateException(
      "GAZETTE_PROTOBUF_MALFORMED_MESSAGE",
      Map(
        "message" -> message,
        "journal" -> Option(journal).getOrElse("?"),
        "offset" -> Option(begin).map(_.toString).getOrElse("?"),
        "reason" -> problem
      )
    )
}
