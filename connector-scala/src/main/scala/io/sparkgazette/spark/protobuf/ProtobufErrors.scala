package io.sparkgazette.spark.protobuf

import scala.jdk.CollectionConverters._

/** The errors of protobuf decoding, worded as the connector's others (`[CONDITION] text`, a
  * stable condition, its SQLSTATE and the named parts of the message), but made here: the
  * connector's front uses this package, so this package does not use the front.
  */
private[spark] object ProtobufErrors {

  private final case class Condition(name: String, sqlState: String, meaning: String)

  private val InvalidArgument = Condition(
    "GAZETTE_PROTOBUF_INVALID_ARGUMENT",
    "22023",
    "An argument of the protobuf decoding functions (`fromProtobuf`, `parse_protobuf`, `gazette_from_protobuf`) " +
      "cannot be used: the mode, the number of arguments, a name or file that is not a string literal."
  )
  private val InvalidDescriptorSet = Condition(
    "GAZETTE_PROTOBUF_INVALID_DESCRIPTOR_SET",
    "42K0G",
    "The descriptor set file cannot be read, is not a FileDescriptorSet, holds an invalid file, or lacks a file " +
      "another imports (write it with protoc's `--include_imports`)."
  )
  private val UnknownMessage = Condition(
    "GAZETTE_PROTOBUF_UNKNOWN_MESSAGE",
    "42K0G",
    "The descriptor set holds no message of the name given (or several of that simple name); the message lists those it holds."
  )
  private val RecursiveMessage = Condition("GAZETTE_PROTOBUF_RECURSIVE_MESSAGE", "42K0G",
    "The message contains itself, and a recursive message has no Spark schema.")
  private val MalformedMessage = Condition("GAZETTE_PROTOBUF_MALFORMED_MESSAGE", "22000",
    "A payload is not a valid message of the type; mode `PERMISSIVE` decodes such payloads as null.")

  /** Every condition of protobuf decoding, with what it means. */
  private[spark] val conditions: Seq[(String, String)] =
    Seq(InvalidArgument, InvalidDescriptorSet, UnknownMessage, RecursiveMessage, MalformedMessage).map(c =>
      c.name -> c.meaning)

  private def argument(c: Condition, message: String, parameters: (String, String)*): ProtobufIllegalArgumentException =
    new ProtobufIllegalArgumentException(c.name, c.sqlState, parameters.toMap, message)

  private[spark] def invalidArgument(name: String, value: String, expected: String): ProtobufIllegalArgumentException =
    argument(InvalidArgument, s"Argument '$name' has invalid value '$value': expected $expected",
      "argument" -> name, "value" -> value, "expected" -> expected)

  private[spark] def badDescriptorSet(file: String, problem: String): ProtobufIllegalArgumentException =
    argument(InvalidDescriptorSet, s"Protobuf descriptor set $file cannot be used: $problem", "file" -> file,
      "reason" -> problem)

  private[spark] def unknownProtobufMessage(name: String, file: String, known: Seq[String])
      : ProtobufIllegalArgumentException =
    argument(
      UnknownMessage,
      s"Protobuf descriptor set $file has no message '$name' (or several of that simple " +
        s"name). It holds: ${if (known.isEmpty) "none" else known.sorted.mkString(", ")}",
      "message" -> name,
      "file" -> file
    )

  private[spark] def recursiveProtobuf(path: String, field: String): ProtobufIllegalArgumentException =
    argument(
      RecursiveMessage,
      s"Protobuf message field $field makes the message recursive ($path), and a " +
        "recursive message has no Spark schema; decode a message that does not contain itself",
      "field" -> field,
      "path" -> path
    )

  private[spark] def malformedProtobuf(message: String, journal: String, begin: java.lang.Long, problem: String)
      : ProtobufIllegalStateException = {
    val (offset, where) = (Option(begin).map(_.toString).getOrElse("?"), Option(journal).getOrElse("?"))
    new ProtobufIllegalStateException(
      MalformedMessage.name,
      MalformedMessage.sqlState,
      Map("message" -> message, "journal" -> where, "offset" -> offset, "reason" -> problem),
      s"Message at offset $offset of journal $where is not a valid $message: $problem. Use mode 'PERMISSIVE' to decode it as null."
    )
  }
}

/** A protobuf decoding error: what `GazetteThrowable` is to the connector's other errors. */
private[spark] sealed trait ProtobufThrowable extends io.sparkgazette.spark.errors.ConditionedThrowable {
  protected def condition: String
  protected def sqlState: String
  protected def parameters: Map[String, String]

  override def getSqlState: String = sqlState
  override def getMessageParameters: java.util.Map[String, String] = parameters.asJava
}

private[spark] final class ProtobufIllegalArgumentException(
    protected val condition: String,
    protected val sqlState: String,
    protected val parameters: Map[String, String],
    message: String
) extends IllegalArgumentException(s"[$condition] $message") with ProtobufThrowable

private[spark] final class ProtobufIllegalStateException(
    protected val condition: String,
    protected val sqlState: String,
    protected val parameters: Map[String, String],
    message: String
) extends IllegalStateException(s"[$condition] $message") with ProtobufThrowable
