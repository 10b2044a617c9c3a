package io.sparkgazette.spark.protobuf

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.types.{DataType, StringType}

/** `gazette_from_protobuf(value, messageName, descriptorFile[, mode[, journal, begin]])`: the
  * connector's decoder as a SQL function, so that clients that cannot reach the JVM (Spark
  * Connect) call it by name. Message name, file and mode are literals: they fix the result's
  * type while the query is analyzed, on the driver, which also reads the descriptor set once.
  */
private[spark] final case class FromProtobufExpression(children: Seq[Expression])
    extends Expression with CodegenFallback {
  import FromProtobufExpression._

  if (children.size < 3 || children.size == 5 || children.size > 6)
    throw ProtobufErrors.invalidArgument(Name, s"${children.size} arguments",
      "(value, messageName, descriptorFile[, mode[, journal, begin]])")

  // Made where the query is analyzed and shipped with the expression to the executors.
  private lazy val decoder: ProtobufDecoder = ProtobufFunctions.decoder(SparkSession.active, literal(1, "messageName"),
    literal(2, "descriptorFile"), if (children.size > 3) literal(3, "mode") else "FAILFAST")
  @transient private lazy val toCatalyst = CatalystTypeConverters.createToCatalystConverter(dataType)

  override def dataType: DataType = decoder.schema
  override def nullable: Boolean = true

  override def eval(input: InternalRow): Any = {
    val value = children.head.eval(input) match {
      case null => return null
      case b: Array[Byte] => b
      case s => s.toString.getBytes(java.nio.charset.StandardCharsets.UTF_8)
    }
    val journal = if (children.size > 4) Option(children(4).eval(input)).map(_.toString).orNull else null
    val begin = if (children.size > 5) children(5).eval(input) match {
      case l: Long => java.lang.Long.valueOf(l)
      case _ => null
    }
    else null
    val row = decoder.call(value, journal, begin)
    if (row == null) null else toCatalyst(row)
  }

  private def literal(i: Int, name: String): String = {
    val e = children(i)
    if (!e.foldable || e.dataType != StringType || e.eval() == null)
      throw ProtobufErrors.invalidArgument(name, e.sql, s"a string literal (argument ${i + 1} of $Name)")
    e.eval().toString
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): Expression =
    copy(children = newChildren)

  override def prettyName: String = Name
}

private[spark] object FromProtobufExpression {
  val Name = "gazette_from_protobuf"
}
