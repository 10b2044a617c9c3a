package io.sparkgazette.spark

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}
import io.sparkgazette.spark.protobuf.FromProtobufExpression

/** The connector's SQL functions, for every session of a Spark that starts with
  * `spark.sql.extensions=io.sparkgazette.spark.GazetteExtensions` (a Spark Connect server, for
  * example): `gazette_from_protobuf(value, messageName, descriptorFile[, mode[, journal, begin]])`.
  */
final class GazetteExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit =
    extensions.injectFunction((
        FunctionIdentifier(FromProtobufExpression.Name),
        new ExpressionInfo(classOf[FromProtobufExpression].getName, FromProtobufExpression.Name),
        (args: Seq[Expression]) => FromProtobufExpression(args)))
}
